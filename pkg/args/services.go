package args

import (
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// serviceTypes are the ways kubectl lets a user name the Service type.
var serviceTypes = map[string]bool{"svc": true, "service": true, "services": true, "service.v1": true, "services.v1": true}

// IsServiceType says whether s names the Service type (svc, Service, ...).
func IsServiceType(s string) bool { return serviceTypes[strings.ToLower(s)] }

// Services accepts svc/NAME, service/NAME, a bare NAME, and kubectl's
// "svc NAME..." form, and returns the names. Anything naming another
// resource type, or a name no Service can have, is a usage error caught
// before any request.
func Services(args []string) ([]string, error) {
	if len(args) > 0 && IsServiceType(args[0]) && !strings.Contains(args[0], "/") {
		args = args[1:]
		if len(args) == 0 {
			return nil, exit.Usagef("name the Service: svc/NAME, or use -l SELECTOR or --all")
		}
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		typ, name, hasType := strings.Cut(a, "/")
		switch {
		case !hasType:
			name = typ
		case !IsServiceType(typ):
			return nil, exit.Usagef("%s is not a Service: kubectl slices works on Services (svc/NAME, service/NAME or NAME)", english.Clip(exit.Quote(a), english.ClipLen))
		}
		// The API server names Services by DNS-1035 labels; anything else
		// ("..", "a/b", "Web") cannot exist and is refused before a request.
		if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
			return nil, exit.Usagef("%s is not a Service name: %s", english.QuoteClip(a, english.ClipLen), errs[0])
		}
		out = append(out, name)
	}
	return out, nil
}

// Select checks a selection before anything is read: exactly one way of
// selecting, names only within one namespace, a selector that parses. It
// returns the selection with the selector parsed (Labels), the one parse
// every later step uses.
func Select(s syncer.Selection) (syncer.Selection, error) {
	switch {
	case len(s.Names) > 0 && (s.Selector != "" || s.All):
		return s, exit.Usagef("name Services or select them with -l/--all, not both")
	case len(s.Names) == 0 && s.Selector == "" && !s.All:
		return s, exit.Usagef("name at least one Service (svc/NAME), or use -l SELECTOR or --all")
	case s.Selector != "" && s.All:
		return s, exit.Usagef("-l and --all do not go together: --all selects every Service, -l those with matching labels")
	case len(s.Names) > 0 && s.AllNamespaces:
		return s, exit.Usagef("a Service cannot be named across all namespaces (-A): give its namespace with -n, or select with -l or --all")
	case s.Selector != "":
		sel, err := labels.Parse(s.Selector)
		if err != nil {
			return s, exit.Usagef("invalid selector %s: %s", english.QuoteClip(s.Selector, english.ClipLen), english.Clip(err.Error(), english.ClipLen))
		}
		s.Labels = sel
	}
	return s, nil
}
