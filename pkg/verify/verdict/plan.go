package verdict

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// Plan verdicts of a Service row.
const (
	PlanAgrees  = "agrees"
	PlanDiffers = "differs"
	PlanUnknown = "unknown"
)

// judgePlan holds the slices in the API against the planned ones as a
// proxy sees them: for each node (or, with none, a node of no name), the
// endpoints each port reaches and whether it has endpoints anywhere. The
// packing of slices, their names and managers do not matter to a proxy and
// are not compared; `kubectl slices diff` shows them.
func judgePlan(s Service, nodes []NodeState) (string, string) {
	if s.PlanUnknown != "" {
		return PlanUnknown, s.PlanUnknown
	}
	names := []proxyexpect.Node{{}}
	if len(nodes) > 0 {
		names = names[:0]
		for _, n := range nodes {
			names = append(names, proxyexpect.NodeOf(n.Node))
		}
	}
	planned := named(s.Planned)
	for _, n := range names {
		api, plan := proxyexpect.For(s.Service, s.Slices, n), proxyexpect.For(s.Service, planned, n)
		if d := firstDifference(api, plan); d != "" {
			if n.Name != "" {
				d = "node " + n.Name + ": " + d
			}
			return PlanDiffers, d
		}
	}
	return PlanAgrees, ""
}

// named gives the slices a plan creates (GenerateName only) a name of
// their own, on copies, as the API server would: proxies key slices by name.
func named(in []*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	out := make([]*discoveryv1.EndpointSlice, 0, len(in))
	for i, s := range in {
		if s != nil && s.Name == "" {
			c := *s
			c.Name = fmt.Sprintf("%splanned-%d", s.GenerateName, i)
			s = &c
		}
		out = append(out, s)
	}
	return out
}

// firstDifference words the first port whose reachable endpoints or
// endpoint presence differ between the API's slices and the plan's.
func firstDifference(api, plan proxyexpect.Expected) string {
	for i, fam := range api.Families {
		if i >= len(plan.Families) {
			break
		}
		for j, p := range fam.Ports {
			q := plan.Families[i].Ports[j]
			have, want := keys(p.Reachable), keys(q.Reachable)
			if p.HasEndpoints == q.HasEndpoints && slices.Equal(have, want) {
				continue
			}
			name := string(fam.Family) + " port " + portName(p)
			missing, extra := minus(want, have), minus(have, want)
			switch {
			case len(missing) > 0:
				return fmt.Sprintf("%s: the plan reaches %s, the slices in the API do not", name, strings.Join(first3(missing), ", "))
			case len(extra) > 0:
				return fmt.Sprintf("%s: the slices in the API reach %s, the plan does not", name, strings.Join(first3(extra), ", "))
			}
			return fmt.Sprintf("%s: the plan has endpoints=%t elsewhere, the slices %t", name, q.HasEndpoints, p.HasEndpoints)
		}
	}
	return ""
}

func portName(p proxyexpect.Port) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprintf("%d/%s", p.Port, strings.ToLower(string(corev1.Protocol(p.Protocol))))
}

func keys(eps []proxyexpect.Endpoint) []string {
	out := make([]string, 0, len(eps))
	for _, e := range eps {
		out = append(out, e.String())
	}
	return out
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func first3(s []string) []string {
	if len(s) > 3 {
		return append(s[:3:3], fmt.Sprintf("and %d more", len(s)-3))
	}
	return s
}
