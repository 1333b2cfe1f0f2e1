package completion

import (
	"context"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
)

// Timeout bounds every lookup a completion makes: a shell waiting on TAB
// must not hang on an unreachable cluster.
const Timeout = 3 * time.Second

// Client is a client from c with every request bounded by Timeout; c is
// not changed.
func Client(c *rest.Config) (kubernetes.Interface, error) {
	c = rest.CopyConfig(c)
	c.Timeout = Timeout
	return kubernetes.NewForConfig(c)
}

// Names lists the names of a resource's objects in ns, bounded by Timeout.
func Names(client kubernetes.Interface, resource, ns string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	return cluster.Names(ctx, client, resource, ns)
}

// Kubeconfig holds the kubeconfig's names, each list sorted, as kubectl
// completes --context, --cluster and --user.
type Kubeconfig struct {
	Contexts, Clusters, Users []string
}

// KubeconfigNames are cfg's context, cluster and user names.
func KubeconfigNames(cfg clientcmdapi.Config) Kubeconfig {
	return Kubeconfig{Contexts: sortedKeys(cfg.Contexts), Clusters: sortedKeys(cfg.Clusters), Users: sortedKeys(cfg.AuthInfos)}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Services turns the namespace's Service names into completions of prefix,
// given the arguments already on the command line: svc/NAME (or
// service/NAME as typed), and bare names after a bare NAME prefix or the
// "svc NAME..." form. Names already given are not offered again.
func Services(names, given []string, prefix string) []string {
	seen := map[string]bool{}
	if norm, err := args.Services(given); err == nil {
		for _, n := range norm {
			seen[n] = true
		}
	}
	bare := len(given) > 0 && args.IsServiceType(given[0])
	typ, _, typed := strings.Cut(prefix, "/")
	if typed && !args.IsServiceType(typ) {
		return nil
	}
	var out []string
	for _, name := range names {
		if seen[name] {
			continue
		}
		var cand string
		switch {
		case bare:
			cand = name
		case typed:
			cand = typ + "/" + name
		case prefix != "" && strings.HasPrefix(name, prefix):
			cand = name
		default:
			cand = "svc/" + name
		}
		if strings.HasPrefix(cand, prefix) {
			out = append(out, cand)
		}
	}
	return out
}

// OneServiceNamed says whether given already names a Service (svc/NAME,
// NAME or svc NAME), for a command that takes exactly one: nothing more is
// offered then.
func OneServiceNamed(given []string) bool {
	names, err := args.Services(given)
	return err == nil && len(names) > 0
}

// WorkloadKinds are offered for a KIND/NAME workload until a kind is typed.
var WorkloadKinds = []string{"deploy/", "sts/", "ds/"}

// Workloads completes a KIND/NAME workload once prefix holds the kind:
// the names of that kind, from names(resource), that fit prefix; ok is
// false while no kind is typed (offer WorkloadKinds).
func Workloads(prefix string, names func(resource string) []string) (out []string, ok bool) {
	kind, _, typed := strings.Cut(prefix, "/")
	if !typed {
		return nil, false
	}
	w, err := deploy.ParseWorkload(kind + "/x")
	if err != nil {
		return nil, true
	}
	for _, n := range names(w.Resource) {
		if c := kind + "/" + n; strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out, true
}

// PodPrefix says whether a command line is naming Pods: the arguments so
// far do (pod/NAME, "pod NAME"), or the word typed starts with a Pod type
// and a slash (pod/, po/, pods/).
func PodPrefix(given []string, prefix string) bool {
	if args.NamesPods(given) {
		return true
	}
	typ, _, typed := strings.Cut(prefix, "/")
	return len(given) == 0 && typed && args.IsPodType(typ)
}

// Pods turns the namespace's Pod names into completions of prefix: TYPE/NAME
// as the type is typed (pod/ by default), bare names after "pod". Names
// already given are not offered again.
func Pods(names, given []string, prefix string) []string {
	seen := map[string]bool{}
	if norm, err := args.Pods(given); err == nil {
		for _, n := range norm {
			seen[n] = true
		}
	}
	bare := len(given) > 0 && args.IsPodType(given[0]) && !strings.Contains(given[0], "/")
	typ, _, typed := strings.Cut(prefix, "/")
	if !typed {
		typ = "pod"
	}
	var out []string
	for _, name := range names {
		cand := typ + "/" + name
		if bare {
			cand = name
		}
		if !seen[name] && strings.HasPrefix(cand, prefix) {
			out = append(out, cand)
		}
	}
	return out
}

// Nodes turns the node names into completions of a comma-separated list
// being typed (prefix): the names after the last comma that are not in the
// list already, each offered with the list before it.
func Nodes(names []string, prefix string) []string {
	head, last := "", prefix
	if i := strings.LastIndex(prefix, ","); i >= 0 {
		head, last = prefix[:i+1], prefix[i+1:]
	}
	seen := map[string]bool{}
	for _, n := range strings.Split(head, ",") {
		seen[n] = true
	}
	var out []string
	for _, name := range names {
		if !seen[name] && strings.HasPrefix(name, last) {
			out = append(out, head+name)
		}
	}
	return out
}
