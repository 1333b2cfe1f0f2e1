package printers

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// ExplainPods renders each report (ExplainPod), a blank line between two.
func ExplainPods(w io.Writer, st Style, reports []explain.PodReport) error {
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := ExplainPod(w, st, r); err != nil {
			return err
		}
	}
	return nil
}

// PodsData renders reports in format (json, yaml): one Pod's report as
// itself, several as a list.
func PodsData(w io.Writer, format string, reports []explain.PodReport) error {
	if len(reports) == 1 {
		return Data(w, format, reports[0])
	}
	return Data(w, format, reports)
}

// ExplainPod renders a PodReport for a person: each Service's row for the
// Pod as explain svc shows it, who publishes the Pod, and the drift.
func ExplainPod(w io.Writer, st Style, r explain.PodReport) error {
	p := r.Pod
	state := "not ready"
	if p.Ready {
		state = "ready"
	}
	if p.Terminating {
		state += ", terminating"
	}
	fmt.Fprintf(w, "%s %s/%s  (%s, node %s, IPs %s, labels %s)\n", st.Bold("Pod"), p.Namespace, p.Name, state, orDash(p.Node),
		orDash(strings.Join(p.IPs, ",")), selectorString(p.Labels))
	if len(r.Services) == 0 {
		fmt.Fprintf(w, "\n%s\n", st.Bold("No Service selects it"))
	}
	for _, s := range r.Services {
		si := s.Service
		fmt.Fprintf(w, "\n%s svc/%s  (selector %s; address types %s; verdict %s)\n", st.Bold("Service"), si.Name, selectorString(si.Selector),
			orDash(strings.Join(si.AddressTypes, ", ")), si.Verdict)
		podSection(w, st, []explain.Pod{s.Decision}, ShowPodsAll)
		publications(w, st, s.Publications)
		if len(s.Drift) > 0 {
			tw := newTable(w)
			for _, d := range s.Drift {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", st.Yellow(string(d.Kind)), d.Address, orDash(managerNames(d.ManagedBy)), d.Message)
			}
			tw.Flush()
		}
		diagnosis(w, st, "  ", s.Published && len(s.Drift) == 0, s.Diagnosis)
	}
	if len(r.NearMisses) > 0 {
		fmt.Fprintf(w, "\n%s\n", st.Bold("Near misses"))
		for _, nm := range r.NearMisses {
			have := nm.Label + "=" + nm.Have
			if nm.Missing {
				have = "no " + nm.Label + " label"
			}
			fmt.Fprintf(w, "  near miss: svc/%s wants %s=%s; the Pod has %s\n", nm.Service, nm.Label, nm.Want, have)
		}
	}
	fmt.Fprintln(w)
	diagnosis(w, st, "", r.InSync, r.Diagnosis)
	return nil
}

// ExplainIP renders an IPReport for a person.
func ExplainIP(w io.Writer, st Style, r explain.IPReport) error {
	where := "namespace " + r.Namespace
	if r.Namespace == "" {
		where = "all namespaces"
	}
	fmt.Fprintf(w, "%s %s  (%s, %s)\n", st.Bold("Address"), r.Address, r.Family, where)
	var hs []string
	for _, h := range r.Holders {
		hs = append(hs, "pod/"+h.Name+" -n "+h.Namespace)
	}
	fmt.Fprintf(w, "  held by: %s\n", orDash(strings.Join(hs, ", ")))
	fmt.Fprintf(w, "\n%s (%d)\n", st.Bold("Publications"), len(r.Publications))
	publications(w, st, r.Publications)
	for _, m := range r.Missing {
		ns, name, _ := strings.Cut(m, "/")
		fmt.Fprintf(w, "  %s svc/%s -n %s: desired, but no manager publishes it\n", st.Yellow("Missing"), name, ns)
	}
	fmt.Fprintln(w)
	diagnosis(w, st, "", r.InSync, r.Diagnosis)
	return nil
}

// publications is a table of the objects publishing an address, each
// flagged stale or not desired with why.
func publications(w io.Writer, st Style, pubs []explain.Publication) {
	if len(pubs) == 0 {
		return
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "  KIND\tNAME\tSERVICE\tMANAGED-BY\tROLE\tADDRESSES\tREADY\tSERVING\tTERMINATING\tTARGET\tSTATUS")
	for _, p := range pubs {
		status := st.Green("desired")
		switch {
		case p.Stale:
			status = st.Red("STALE")
		case !p.Desired:
			status = st.Yellow("drift")
		}
		fmt.Fprintf(tw, "  %s\t%s/%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Kind, p.Namespace, p.Name, orDash(p.Service), explain.ManagerName(p.ManagedBy), p.Role,
			strings.Join(p.Addresses, ","), boolCell(p.Ready), boolCell(p.Serving), boolCell(p.Terminating), orDash(prefixed("pod/", p.TargetRef)), status)
	}
	tw.Flush()
	for _, p := range pubs {
		for _, pr := range p.Problems {
			fmt.Fprintf(w, "  %s %s/%s: %s\n", st.Faint("note:"), p.Namespace, p.Name, pr)
		}
	}
}

// diagnosis prints a verdict as explain svc ends: green when all is as
// desired, red otherwise, and the command to run.
func diagnosis(w io.Writer, st Style, indent string, ok bool, d explain.Diagnosis) {
	verdict := st.Green("Diagnosis:")
	if !ok {
		verdict = st.Red("Diagnosis:")
	}
	fmt.Fprintf(w, "%s%s %s\n", indent, verdict, d.Summary)
	if d.Command != "" {
		fmt.Fprintf(w, "%s  Run: %s\n", indent, st.Cyan(d.Command))
	}
}
