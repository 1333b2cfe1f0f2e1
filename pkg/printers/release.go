package printers

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/lifecycle"
)

// Released writes what release deleted for one Service: a line for the
// Service, then one per slice, as kubectl delete does.
func Released(w io.Writer, st Style, out lifecycle.ReleaseOutcome, dryRun string) {
	svc := out.Service
	hb := out.Judgement
	verb := st.Green("released")
	if dryRun != "" {
		verb = st.Cyan("would be released" + dryRun)
	}
	why := fmt.Sprintf("kube-controller-manager publishes the same endpoints in %s", english.Plural(len(hb.Controller), "slice", "slices"))
	if !hb.Same {
		why = "forced: kube-controller-manager's slices differ or are missing"
	}
	waited := ""
	if out.Waited > 0 {
		waited = fmt.Sprintf(" after waiting %s", out.Waited.Round(100*time.Millisecond))
	}
	fmt.Fprintf(w, "%s %s%s: %s\n", st.Bold(fmt.Sprintf("service %s/%s", svc.Namespace, svc.Name)), verb, waited, why)
	for _, s := range out.Result.Deleted {
		fmt.Fprintf(w, "endpointslice.discovery.k8s.io/%s deleted%s\n", s.Name, dryRun)
	}
}

// Orphans lists the slices prune deletes and why, as a table.
func Orphans(w io.Writer, st Style, orphans []explain.Orphan) {
	t := newTable(w)
	fmt.Fprintln(t, st.Bold("NAMESPACE")+"\t"+st.Bold("ENDPOINTSLICE")+"\t"+st.Bold("SERVICE")+"\t"+st.Bold("REASON")+"\t"+st.Bold("DETAIL"))
	for _, o := range orphans {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\n", o.Slice.Namespace, o.Slice.Name, o.Service, st.Yellow(string(o.Reason)), o.Message)
	}
	t.Flush()
}

// EndpointsOrphans lists the Endpoints objects prune deletes and why.
func EndpointsOrphans(w io.Writer, st Style, orphans []explain.EndpointsOrphan) {
	t := newTable(w)
	fmt.Fprintln(t, st.Bold("NAMESPACE")+"\t"+st.Bold("ENDPOINTS")+"\t"+st.Bold("REASON")+"\t"+st.Bold("DETAIL"))
	for _, o := range orphans {
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\n", o.Endpoints.Namespace, o.Endpoints.Name, st.Yellow(string(o.Reason)), o.Message)
	}
	t.Flush()
}

// ReleasedEndpoints writes what release did with a Service's Endpoints
// object of ours.
func ReleasedEndpoints(w io.Writer, st Style, ns, name string, ep lifecycle.EndpointsRelease, dryRun string) {
	verb, why := st.Green("released"), "kube-controller-manager's Endpoints controller has taken it over"
	if !ep.Ours {
		verb = "nothing to release"
	}
	if ep.Disowned {
		why = "forced: our managed-by label removed, addresses left for the controller to overwrite"
		if dryRun != "" {
			verb = st.Cyan("would be released" + dryRun)
		}
	}
	fmt.Fprintf(w, "%s %s: %s\n", st.Bold(fmt.Sprintf("endpoints %s/%s", ns, name)), verb, why)
}
