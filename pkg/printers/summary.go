package printers

import (
	"fmt"
	"io"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Summary writes one line per Service that did not fail: what was written
// and how many endpoints the Service now has. Failures go to Failures.
// dryRun is "", "client" or "server".
func Summary(w io.Writer, st Style, outs []outcome.Outcome, dryRun string) {
	for _, o := range outs {
		name := st.Bold(fmt.Sprintf("service %s/%s", o.Namespace, o.Name))
		r := o.Result
		switch {
		case o.Err != nil:
		case o.Held != "":
			fmt.Fprintf(w, "%s %s: %s\n", name, st.Cyan("not written"), o.Held)
		case o.Plan != nil && !o.Plan.Service.Planned():
			fmt.Fprintf(w, "%s %s (%s): %s\n", name, st.Yellow("skipped"), o.Plan.Service.Reason, o.Plan.Service.Message)
		case o.Plan != nil:
			verb := st.Green("synced")
			if dryRun != "" {
				verb = st.Cyan("would sync (dry run: " + dryRun + ")")
			}
			if r.Writes() == 0 {
				verb = st.Green("in sync")
			}
			ready, notReady := CountEndpoints(o.Plan.Final())
			fmt.Fprintf(w, "%s %s: %d created, %d updated, %d deleted, %d unchanged; endpoints: %d ready, %d not ready\n",
				name, verb, len(r.Created), len(r.Updated), len(r.Deleted), len(o.Plan.Unchanged), ready, notReady)
		}
	}
}

// Interrupted reports a run a signal cut short: for each Service cut
// mid-way, one line of the writes it made (its failure is the signal's,
// not said), and returns the Services that finished and what the cut ones
// wrote, so every write that completed is reported.
func Interrupted(w io.Writer, runs []outcome.Outcome) (finished []outcome.Outcome, written []Written) {
	for _, run := range runs {
		if run.Err == nil {
			finished = append(finished, run)
			continue
		}
		if r := run.Result; r.Writes() > 0 {
			fmt.Fprintf(w, "service %s/%s: interrupted after %d created, %d updated, %d deleted\n",
				run.Namespace, run.Name, len(r.Created), len(r.Updated), len(r.Deleted))
			written = append(written, WrittenOf(r)...)
		}
	}
	return finished, written
}

// Failures writes one "error: ..." line per failed Service (the errors
// already name their Service), followed by every write that happened before
// it failed, so a partial sync is never under-reported.
func Failures(w io.Writer, st Style, outs []outcome.Outcome) {
	for _, o := range outs {
		if o.Err == nil {
			continue
		}
		fmt.Fprintf(w, "%s %v\n", st.Red("error:"), o.Err)
		written := WrittenOf(o.Result)
		if len(written) > 0 {
			fmt.Fprintf(w, "  service %s/%s: %d writes happened before the failure:\n", o.Namespace, o.Name, len(written))
		}
		for _, wr := range written {
			fmt.Fprintf(w, "    endpointslice/%s %s\n", wr.Slice.Name, wr.Operation)
		}
	}
}

// WrittenOf lists a Result's writes in the order kubectl apply reports
// them: created, configured, deleted.
func WrittenOf(r outcome.Result) []Written {
	var out []Written
	for _, s := range r.Created {
		out = append(out, Written{Slice: s, Operation: "created"})
	}
	for _, s := range r.Updated {
		out = append(out, Written{Slice: s, Operation: "configured"})
	}
	for _, s := range r.Deleted {
		out = append(out, Written{Slice: s, Operation: "deleted"})
	}
	return out
}

// Warnings writes the planner's warnings for one Service, once each.
func Warnings(w io.Writer, st Style, plan *reconcile.Plan) {
	if plan == nil {
		return
	}
	for _, wn := range plan.Warnings {
		fmt.Fprintf(w, "%s service %s/%s: %s: %s\n", st.Yellow("Warning:"), plan.Service.Namespace, plan.Service.Name, wn.Object, wn.Message)
	}
}

// CountEndpoints counts ready and not-ready endpoints.
func CountEndpoints(slices []*discovery.EndpointSlice) (ready, notReady int) {
	for _, s := range slices {
		for i := range s.Endpoints {
			if r := s.Endpoints[i].Conditions.Ready; r != nil && *r {
				ready++
			} else {
				notReady++
			}
		}
	}
	return ready, notReady
}
