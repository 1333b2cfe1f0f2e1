package exit

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster words an error that is about the cluster, not a Service.
func Cluster(err error) error {
	if isUnreachable(err) {
		return &Error{Code: API, Err: fmt.Errorf("%s", unreachable(err))}
	}
	return &Error{Code: classify(err), Err: err}
}

// Process words an error that stopped the long-running process (the loop
// or the webhook, pkg/daemon) over scope: its configuration (ClassConfig)
// is a usage error, what it (ClassAPI) or the command already worded stays
// as it is, anything else is worded as Loop words it.
func Process(ns, scope string, err error) error {
	if err == nil {
		return nil
	}
	var ee *Error
	if errors.As(err, &ee) {
		return ee // worded already (another tool's slices refused before the first write)
	}
	if ce := find(err, ClassConfig); ce != nil {
		return &Error{Code: Usage, Err: ce}
	}
	if ae := find(err, ClassAPI); ae != nil {
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
