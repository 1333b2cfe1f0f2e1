package lifecycle

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// ForeignError: the run's managed-by value is another tool's, as slices
// labelled with it that kubectl-slices did not write show. It names them
// (the first few).
type ForeignError struct {
	ManagedBy string
	// Slices are namespace/name, in list order.
	Slices []string
}

// maxNamed bounds the slices a ForeignError names.
const maxNamed = 5

func (e *ForeignError) Error() string {
	named := e.Slices
	more := ""
	if len(named) > maxNamed {
		named, more = named[:maxNamed], fmt.Sprintf(" and %d more", len(e.Slices)-maxNamed)
	}
	what, verbs, them := "EndpointSlices", "carry it but were", "them"
	if len(e.Slices) == 1 {
		what, verbs, them = "EndpointSlice", "carries it but was", "it"
	}
	return fmt.Sprintf("refusing to write under managed-by %q: %s %s%s %s not written by kubectl-slices (another tool's value?); pick another --managed-by, or pass --force to take %s over",
		e.ManagedBy, what, strings.Join(named, ", "), more, verbs, them)
}

// CheckForeign lists the slices of namespace ("" for all) labelled with
// each value a run under managedBy writes (selected by label on the server)
// and refuses the run when any of them shows no trace of our field managers
// (apply.FieldManager and the run's own): the value then belongs to another
// tool, and writing under it would rewrite or delete that tool's slices. The
// whole run is refused, not only the Services those slices belong to, since
// slices we would write under the value for other Services would be that
// tool's to rewrite or delete in turn.
//
// The controllers' own values need --force anyway ("the controller is off
// for good"), which also skips this check; callers skip it under --force.
// Our default value is kubectl-slices' own name, guarded by the webhook
// where it is deployed: it is not checked, which keeps a run's requests as
// they were (one list fewer per run).
func CheckForeign(ctx context.Context, client kubernetes.Interface, namespace, managedBy, fieldManager string) error {
	if managedBy == reconcile.DefaultManagedBy {
		return nil
	}
	var foreign []string
	for _, mb := range reconcile.OurValues(managedBy) {
		slices, err := ourSlices(ctx, client, namespace, mb)
		if err != nil {
			return fmt.Errorf("list endpointslices: %w", err)
		}
		for _, s := range apply.NotWrittenBy(slices, mb, apply.FieldManager, fieldManager) {
			foreign = append(foreign, s.Namespace+"/"+s.Name)
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	return &ForeignError{ManagedBy: managedBy, Slices: foreign}
}
