package printers

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// PruneReport is what prune found (of how many it checked) and deleted.
type PruneReport struct {
	Slices           []explain.Orphan
	SlicesSeen       int
	Endpoints        []explain.EndpointsOrphan
	EndpointsSeen    int
	DeletedSlices    []*discovery.EndpointSlice
	DeletedEndpoints []*corev1.Endpoints
	// SlicesFailed: deleting the slices failed and no Endpoints object was
	// tried; Failed: the run failed, its error is said by the caller.
	SlicesFailed, Failed bool
	ManagedBy            string
	// DryRun is the suffix of a dry run's lines (" (dry run)"), or "".
	DryRun string
}

// Prune prints, on w, each kind's orphans as a table and a line per delete
// (kubectl's "deleted" lines), or that there was nothing to prune; and on
// errW the count pruned of those checked, unless the run failed.
func Prune(w, errW io.Writer, st Style, r PruneReport) {
	if len(r.Slices) == 0 && len(r.Endpoints) == 0 {
		fmt.Fprintf(w, "Nothing to prune: %d slices and %d Endpoints objects of %s checked, each belongs to its Service.\n", r.SlicesSeen, r.EndpointsSeen, r.ManagedBy)
		return
	}
	if len(r.Slices) > 0 {
		Orphans(w, st, r.Slices)
		for _, s := range r.DeletedSlices {
			fmt.Fprintf(w, "endpointslice.discovery.k8s.io/%s deleted%s (namespace %s)\n", s.Name, r.DryRun, s.Namespace)
		}
		if r.SlicesFailed {
			return
		}
	}
	if len(r.Endpoints) > 0 {
		EndpointsOrphans(w, st, r.Endpoints)
		for _, ep := range r.DeletedEndpoints {
			fmt.Fprintf(w, "endpoints/%s deleted%s (namespace %s)\n", ep.Name, r.DryRun, ep.Namespace)
		}
	}
	if !r.Failed {
		fmt.Fprintf(errW, "%d of %d slices and %d of %d Endpoints objects of %s pruned%s.\n",
			len(r.DeletedSlices), r.SlicesSeen, len(r.DeletedEndpoints), r.EndpointsSeen, r.ManagedBy, r.DryRun)
	}
}
