package exit

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

// Described words each failure as the one line a user sees (Describe).
func Described(outs []syncer.Outcome) []syncer.Outcome {
	out := make([]syncer.Outcome, len(outs))
	for i, o := range outs {
		if o.Err != nil {
			o.Err = Describe(o.Namespace, o.Name, o.Err)
		}
		out[i] = o
	}
	return out
}

// ForOutcomes is the exit of a run over several Services, whose failures
// were printed: all good → nil; some failed, some succeeded → Changes; all
// failed → the first failure's own code.
func ForOutcomes(runs []syncer.Outcome) error {
	failed, first := 0, error(nil)
	for _, r := range runs {
		if r.Err != nil {
			failed++
			if first == nil {
				first = r.Err
			}
		}
	}
	switch {
	case failed == 0:
		return nil
	case failed < len(runs):
		return &Error{Code: Changes, Err: fmt.Errorf("%d of %d Services failed", failed, len(runs))}
	}
	return &Error{Code: Code(first), Err: ErrPrinted}
}

// Cluster words an error that is about the cluster, not a Service.
func Cluster(err error) error {
	if isUnreachable(err) {
		return &Error{Code: API, Err: fmt.Errorf("%s", unreachable(err))}
	}
	return &Error{Code: classify(err), Err: err}
}

// Process words an error that stopped the long-running process (the loop
// or the webhook, pkg/daemon) over scope: its configuration is a usage
// error, what it or the command already worded stays as it is, anything
// else is worded as Loop words it.
func Process(ns, scope string, err error) error {
	var ce *daemon.ConfigError
	var ae *daemon.APIError
	var ee *Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		return ee // worded already (another tool's slices refused before the first write)
	case errors.As(err, &ce):
		return &Error{Code: Usage, Err: ce}
	case errors.As(err, &ae):
		return &Error{Code: API, Err: ae}
	}
	return Loop(ns, scope, err)
}

// Loop describes an error that stopped the long-running loop over scope
// ("" for all namespaces). A right it needs is missing (checked at
// start-up, so the informers never retry a forbidden list forever): one
// line naming it and where the RBAC is.
func Loop(ns, scope string, err error) error {
	if !apierrors.IsForbidden(err) {
		return Describe(ns, "", err)
	}
	where := "namespace " + scope
	if scope == metav1.NamespaceAll {
		where = "all namespaces"
	}
	return &Error{API, fmt.Errorf("forbidden: cannot %s in %s; `kubectl slices deploy` prints the RBAC the loop needs",
		forbiddenWhat(err), where)}
}

// forbiddenWhat is "VERB RESOURCE[.GROUP]" of a Forbidden error.
func forbiddenWhat(err error) string {
	what := "access the API"
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		verb := forbiddenVerb(status.Status().Message)
		what = verb + " the request"
		if d := status.Status().Details; d != nil {
			what = verb + " " + d.Kind
			if d.Group != "" {
				what += "." + d.Group
			}
		}
	}
	return what
}
