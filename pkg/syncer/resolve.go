package syncer

import (
	"context"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
)

// Selection is which Services a command selects, the one form every
// command and the loop share: Names in Namespace (-n's or the
// kubeconfig's), or, with none, those matching Selector (-l; every one with
// All, --all) in Namespace or, with AllNamespaces (-A), in every namespace.
// Labels is Selector parsed, once, by the command's validation
// (args.Select); nil when no selector is given.
type Selection struct {
	Namespace     string
	Names         []string
	Selector      string
	Labels        labels.Selector
	All           bool
	AllNamespaces bool
}

// Listed is the namespace a selection by label lists: Namespace, or every
// one ("") with -A; names are always looked up in Namespace.
func (s Selection) Listed() string {
	if s.AllNamespaces && len(s.Names) == 0 {
		return metav1.NamespaceAll
	}
	return s.Namespace
}

// ResolveError is a read that stopped resolving a selection; Name is ""
// for a list.
type ResolveError struct {
	Namespace, Name string
	Err             error
}

func (e *ResolveError) Error() string { return e.Err.Error() }
func (e *ResolveError) Unwrap() error { return e.Err }

// Resolve finds the selected Services as kubectl get would, sorted by
// namespace and name, each named once. Every request carries ctx, so Ctrl-C
// stops a stalled one. A missing Service is a Target with its NotFound
// error, so the others still run; any other error stops the run.
func Resolve(ctx context.Context, client kubernetes.Interface, sel Selection) ([]Target, error) {
	var out []Target
	if len(sel.Names) > 0 {
		seen := map[string]bool{}
		for _, name := range sel.Names {
			if seen[name] {
				continue
			}
			seen[name] = true
			svc, err := cluster.Reader{Client: client}.Service(ctx, sel.Namespace, name)
			switch {
			case apierrors.IsNotFound(err):
				out = append(out, Target{Namespace: sel.Namespace, Name: name, Err: err})
			case err != nil:
				return nil, &ResolveError{Namespace: sel.Namespace, Name: name, Err: err}
			default:
				out = append(out, Target{Service: svc, Namespace: svc.Namespace, Name: svc.Name})
			}
		}
	} else {
		svcs, err := cluster.Reader{Client: client}.Services(ctx, sel.Listed(), sel.Selector)
		if err != nil {
			return nil, &ResolveError{Namespace: sel.Listed(), Err: err}
		}
		for _, svc := range svcs {
			out = append(out, Target{Service: svc, Namespace: svc.Namespace, Name: svc.Name})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
