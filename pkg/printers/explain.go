package printers

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// ShowPods selects the Pods explain lists.
type ShowPods string

const (
	// ShowPodsAuto lists every Pod up to PodListLimit, then counts by reason.
	ShowPodsAuto     ShowPods = ""
	ShowPodsAll      ShowPods = "all"
	ShowPodsExcluded ShowPods = "excluded"
	// PodListLimit is where the automatic mode switches to counts.
	PodListLimit = 50
	// driftListLimit bounds the drift lines shown; -o json has them all.
	driftListLimit = 50
)

// Valid says whether s is one of the ShowPods values (--show-pods).
func (s ShowPods) Valid() bool {
	return s == ShowPodsAuto || s == ShowPodsAll || s == ShowPodsExcluded
}

// Explain renders a Report for a person.
func Explain(w io.Writer, st Style, r explain.Report, show ShowPods) error {
	s := r.Service
	typ := s.Type
	if s.Headless {
		typ = "headless"
	}
	fmt.Fprintf(w, "%s %s/%s  (%s, selector %s)\n", st.Bold("Service"), s.Namespace, s.Name, typ, selectorString(s.Selector))
	if len(r.Defaulted) > 0 {
		more := ""
		if n := len(r.Defaulted) - 1; n > 0 {
			more = fmt.Sprintf("; and %s (-o json lists them)", english.Plural(n, "more object", "more objects"))
		}
		fmt.Fprintf(w, "  %s input read offline, defaulted as the API server would: %s%s\n", st.Faint("note:"), r.Defaulted[0], more)
	}
	tw := newTable(w)
	var ports []string
	for _, p := range s.Ports {
		name := p.Name
		if name == "" {
			name = "-"
		}
		ports = append(ports, fmt.Sprintf("%s %d→%s/%s", name, p.Port, p.TargetPort, p.Protocol))
	}
	fmt.Fprintf(tw, "  ports:\t%s\n", orDash(strings.Join(ports, ", ")))
	fmt.Fprintf(tw, "  address types:\t%s\n", orDash(strings.Join(s.AddressTypes, ", ")))
	fmt.Fprintf(tw, "  publishNotReadyAddresses:\t%v\n", s.PublishNotReadyAddresses)
	fmt.Fprintf(tw, "  trafficDistribution:\t%s\n", orDash(s.TrafficDistribution))
	if s.TopologyMode != "" {
		fmt.Fprintf(tw, "  topology mode:\t%s\n", s.TopologyMode)
	}
	fmt.Fprintf(tw, "  verdict:\t%s: %s\n", s.Verdict, s.Message)
	tw.Flush()

	fmt.Fprintf(w, "\n%s %s\n", st.Bold("Selector matches"), english.Plural(r.Selector.Matched, "Pod", "Pods"))
	for _, nm := range r.Selector.NearMisses {
		have := nm.Label + "=" + nm.Have
		if nm.Missing {
			have = "no " + nm.Label + " label"
		}
		fmt.Fprintf(w, "  near miss: pod %s has %s; the selector wants %s=%s\n", nm.Pod, have, nm.Label, nm.Want)
	}
	if len(r.Pods) > 0 {
		fmt.Fprintln(w)
		podSection(w, st, r.Pods, show)
	}

	fmt.Fprintf(w, "\n%s\n", st.Bold("Slices by manager"))
	tw = newTable(w)
	fmt.Fprintln(tw, "  MANAGED-BY\tROLE\tSLICES\tENDPOINTS\tREADY")
	for _, m := range r.Managers {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\n", explain.ManagerName(m.ManagedBy), m.Role, m.Slices, m.Endpoints, m.Ready)
	}
	tw.Flush()
	for _, m := range r.Managers {
		for _, o := range m.OverLimit {
			fmt.Fprintf(w, "  %s slice %s is over --max-endpoints-per-slice\n", m.ManagedBy, o)
		}
	}

	if len(r.Drift) > 0 {
		fmt.Fprintf(w, "\n%s (%d)\n", st.Bold("Drift"), len(r.Drift))
		tw = newTable(w)
		for i, d := range r.Drift {
			if i == driftListLimit {
				fmt.Fprintf(tw, "  ... and %d more (-o json lists all)\n", len(r.Drift)-driftListLimit)
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", st.Yellow(string(d.Kind)), d.Address, orDash(prefixed("pod/", d.Pod)),
				orDash(managerNames(d.ManagedBy)), d.Message)
		}
		tw.Flush()
	}

	if r.EndpointsDrift != "" {
		fmt.Fprintf(w, "\n%s %s\n", st.Yellow("Endpoints:"), r.EndpointsDrift)
	}
	if len(r.VersionNotes) > 0 {
		fmt.Fprintf(w, "\n%s kube-controller-manager differs here:\n", st.Yellow("Cluster release "+r.ClusterRelease+":"))
		for _, n := range r.VersionNotes {
			fmt.Fprintf(w, "  %s (until %s): %s\n", n.Difference, n.Since, n.Message)
		}
	}
	verdict := st.Green("Diagnosis:")
	if !r.InSync {
		verdict = st.Red("Diagnosis:")
	}
	fmt.Fprintf(w, "\n%s %s\n", verdict, r.Diagnosis.Summary)
	if r.Diagnosis.Command != "" {
		fmt.Fprintf(w, "  Run: %s\n", st.Cyan(r.Diagnosis.Command))
	}
	return nil
}

func podSection(w io.Writer, st Style, pods []explain.Pod, show ShowPods) {
	list := pods
	if show == ShowPodsExcluded {
		list = nil
		for _, p := range pods {
			if !p.Included {
				list = append(list, p)
			}
		}
	}
	if show == ShowPodsAuto && len(pods) > PodListLimit {
		podCounts(w, st, pods)
		return
	}
	if show == ShowPodsExcluded && len(list) == 0 {
		fmt.Fprintf(w, "  No Pod is excluded: %s.\n", english.Plural(len(pods), "matched Pod is an endpoint", "matched Pods are endpoints"))
		return
	}
	withHostnames := false
	for _, p := range list {
		for _, e := range p.Endpoint {
			withHostnames = withHostnames || e.Hostname != ""
		}
	}
	tw := newTable(w)
	hostCol := ""
	if withHostnames {
		hostCol = "\tHOSTNAME"
	}
	fmt.Fprintln(tw, "  POD\tENDPOINT\tREADY\tSERVING\tTERMINATING\tADDRESSES"+hostCol+"\tPORTS\tNODE\tZONE\tHINTS\tREASON")
	for _, p := range list {
		var addrs, ports, hints []string
		hostname := ""
		for _, e := range p.Endpoint {
			addrs = append(addrs, e.Addresses...)
			ports = append(ports, e.Ports...)
			hints = append(hints, e.Hints...)
			if hostname == "" {
				hostname = e.Hostname
			}
		}
		if withHostnames {
			addrs = []string{orDash(strings.Join(addrs, ",")) + "\t" + orDash(hostname)}
		}
		yes := endpointCell(st, p, len(ports))
		reason := string(p.Reason)
		if p.Message != "" {
			reason += ": " + p.Message
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, yes, boolCell(p.Ready), boolCell(p.Serving), boolCell(p.Term),
			orDash(strings.Join(addrs, ",")), orDash(strings.Join(uniqStrings(ports), ",")), orDash(p.Node), orDash(p.Zone),
			orDash(strings.Join(uniqStrings(hints), ",")), reason)
	}
	tw.Flush()
	for _, p := range list {
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  %s %s: %s: %s\n", st.Faint("note:"), p.Name, n.Reason, n.Message)
		}
	}
}

// endpointCell says whether a Pod is an endpoint, and whether it gets
// traffic on every Service port: a Pod lacking a named target port is
// published without that port and receives nothing on it.
func endpointCell(st Style, p explain.Pod, resolvedPorts int) string {
	switch {
	case !p.Included:
		return st.Red("no")
	case len(p.MissingPorts) > 0 && resolvedPorts == 0:
		return st.Yellow("no port")
	case len(p.MissingPorts) > 0:
		return st.Yellow("partial")
	}
	return st.Green("yes")
}

// podCounts summarises a large Service: included by readiness, excluded by
// reason.
func podCounts(w io.Writer, st Style, pods []explain.Pod) {
	ready, notReady, terminating, portless := 0, 0, 0, 0
	excluded := map[string]int{}
	for _, p := range pods {
		switch {
		case !p.Included:
			excluded[string(p.Reason)]++
		case len(p.MissingPorts) > 0:
			portless++
		case p.Term != nil && *p.Term:
			terminating++
		case p.Ready != nil && *p.Ready:
			ready++
		default:
			notReady++
		}
	}
	fmt.Fprintf(w, "  %s endpoints: %d ready, %d not ready, %d terminating\n", st.Green("included"), ready, notReady, terminating)
	if portless > 0 {
		fmt.Fprintf(w, "  %s without a target port (PortNotFound: no traffic on that port): %d\n", st.Yellow("included"), portless)
	}
	reasons := make([]string, 0, len(excluded))
	for r := range excluded {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "  %s %s: %d\n", st.Red("excluded"), r, excluded[r])
	}
	fmt.Fprintf(w, "  (%d Pods: --show-pods=all lists every one, --show-pods=excluded the excluded ones)\n", len(pods))
}

func selectorString(sel map[string]string) string {
	if len(sel) == 0 {
		return "none"
	}
	return labels.SelectorFromSet(sel).String()
}

func boolCell(b *bool) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprint(*b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func uniqStrings(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func managerNames(mbs []string) string {
	names := make([]string, len(mbs))
	for i, mb := range mbs {
		names[i] = explain.ManagerName(mb)
	}
	return strings.Join(names, ",")
}
