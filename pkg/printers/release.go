package printers

import (
	"fmt"
	"io"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
)

// Release is one Service's hand-back as release reports it. The command
// fills it from lifecycle's outcome, so that printers depend on no package
// that writes.
type Release struct {
	Service   *corev1.Service
	Judgement judge.Handback
	// Deleted are the slices deleted (or, in a dry run, that would be).
	Deleted []*discovery.EndpointSlice
	Waited  time.Duration
	// Refused says why ours were kept.
	Refused   string
	Endpoints EndpointsRelease
}

// EndpointsRelease is what release did with a Service's v1 Endpoints
// object (see lifecycle.EndpointsRelease).
type EndpointsRelease struct {
	Ours, TakenOver, Disowned bool
	Refused                   string
}

// ReleaseReport reports a release run: each hand-back on Out, each refusal
// on ErrOut. Named says the Services were named on the command line, so a
// Service without anything of ours to release is said too.
type ReleaseReport struct {
	Out, ErrOut io.Writer
	St, ErrSt   Style
	Named       bool
	ManagedBy   string
	// DryRun is the suffix of a dry run's lines (" (dry run)"), or "".
	DryRun string
}

// Print reports each Service's hand-back in order and returns the counts
// of the summary line: Services released, refused (slices or Endpoints),
// and those without anything of ours.
func (r ReleaseReport) Print(rels []Release) (released, refused, untouched int) {
	for _, rel := range rels {
		svc, ep := rel.Service, rel.Endpoints
		switch {
		case rel.Refused != "":
			refused++
			fmt.Fprintf(r.ErrOut, "%s service %s/%s not released: %s\n", r.ErrSt.Yellow("refused:"), svc.Namespace, svc.Name, rel.Refused)
		case len(rel.Judgement.Ours) == 0:
			if !ep.Ours {
				untouched++
			}
			if r.Named {
				fmt.Fprintf(r.Out, "%s: no slices of %s to release\n", r.St.Bold("service "+svc.Namespace+"/"+svc.Name), r.ManagedBy)
			}
		default:
			released++
			r.released(rel)
		}
		switch {
		case ep.Refused != "":
			if rel.Refused == "" {
				refused++
			}
			fmt.Fprintf(r.ErrOut, "%s endpoints %s/%s not released: %s\n", r.ErrSt.Yellow("refused:"), svc.Namespace, svc.Name, ep.Refused)
		case ep.Ours || (ep.TakenOver && r.Named):
			if ep.Ours && len(rel.Judgement.Ours) == 0 && rel.Refused == "" {
				released++
			}
			r.releasedEndpoints(svc.Namespace, svc.Name, ep)
		}
	}
	return released, refused, untouched
}

// Summary is the last line of a release by selector: the counts of Print.
func (r ReleaseReport) Summary(released, refused, untouched int) {
	fmt.Fprintf(r.ErrOut, "%d released, %d refused, %d without slices of %s.\n", released, refused, untouched, r.ManagedBy)
}

// released writes what release deleted for one Service: a line for the
// Service, then one per slice, as kubectl delete does.
func (r ReleaseReport) released(rel Release) {
	st, svc, hb := r.St, rel.Service, rel.Judgement
	verb := st.Green("released")
	if r.DryRun != "" {
		verb = st.Cyan("would be released" + r.DryRun)
	}
	why := fmt.Sprintf("kube-controller-manager publishes the same endpoints in %s", english.Plural(len(hb.Controller), "slice", "slices"))
	if !hb.Same {
		why = "forced: kube-controller-manager's slices differ or are missing"
	}
	waited := ""
	if rel.Waited > 0 {
		waited = fmt.Sprintf(" after waiting %s", rel.Waited.Round(100*time.Millisecond))
	}
	fmt.Fprintf(r.Out, "%s %s%s: %s\n", st.Bold(fmt.Sprintf("service %s/%s", svc.Namespace, svc.Name)), verb, waited, why)
	for _, s := range rel.Deleted {
		fmt.Fprintf(r.Out, "endpointslice.discovery.k8s.io/%s deleted%s\n", s.Name, r.DryRun)
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

// releasedEndpoints writes what release did with a Service's Endpoints
// object of ours.
func (r ReleaseReport) releasedEndpoints(ns, name string, ep EndpointsRelease) {
	st := r.St
	verb, why := st.Green("released"), "kube-controller-manager's Endpoints controller has taken it over"
	if !ep.Ours {
		verb = "nothing to release"
	}
	if ep.Disowned {
		why = "forced: our managed-by label removed, addresses left for the controller to overwrite"
		if r.DryRun != "" {
			verb = st.Cyan("would be released" + r.DryRun)
		}
	}
	fmt.Fprintf(r.Out, "%s %s: %s\n", st.Bold(fmt.Sprintf("endpoints %s/%s", ns, name)), verb, why)
}
