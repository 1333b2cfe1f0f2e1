package args

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// podTypes are the ways kubectl lets a user name the Pod type.
var podTypes = map[string]bool{"po": true, "pod": true, "pods": true, "pod.v1": true, "pods.v1": true}

// IsPodType says whether s names the Pod type (po, pod, pods).
func IsPodType(s string) bool { return podTypes[strings.ToLower(s)] }

// NamesPods says whether the arguments name Pods (pod/NAME, "pod NAME")
// rather than Services.
func NamesPods(args []string) bool {
	if len(args) == 0 {
		return false
	}
	typ, _, _ := strings.Cut(args[0], "/")
	return IsPodType(typ)
}

// Pods accepts pod/NAME (pods/, po/) and kubectl's "pod NAME..." form, and
// returns the names; a bare NAME is a Service's, so every argument names
// its type. A name no Pod can have is refused before any request.
func Pods(args []string) ([]string, error) {
	if len(args) > 0 && IsPodType(args[0]) {
		if len(args) == 1 {
			return nil, exit.Usagef("name the Pod: pod/NAME, or use -l SELECTOR")
		}
		typed := make([]string, 0, len(args)-1)
		for _, a := range args[1:] {
			if !strings.Contains(a, "/") {
				a = "pod/" + a
			}
			typed = append(typed, a)
		}
		args = typed
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		typ, name, _ := strings.Cut(a, "/")
		if !IsPodType(typ) {
			return nil, exit.Usagef("%s is not a Pod: name every Pod as pod/NAME (explain takes Pods or one Service, not both)", english.Clip(exit.Quote(a), english.ClipLen))
		}
		// The API server names Pods by DNS-1123 subdomains.
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, exit.Usagef("%s is not a Pod name: %s", english.QuoteClip(a, english.ClipLen), errs[0])
		}
		out = append(out, name)
	}
	return out, nil
}
