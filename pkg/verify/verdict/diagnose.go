package verdict

import (
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// diagnose words the run's verdict as one line and the command to run
// next, from the first node (in name order) with the worst status.
func diagnose(rep Report, target string) (string, string) {
	row, ok := first(rep.Nodes, rep.Status)
	if rep.Status == Unknown {
		// A missing right holds on every node: name it before a node's own trouble.
		for _, r := range rep.Nodes {
			if r.Status == Unknown && strings.HasPrefix(r.Reason, "forbidden: ") {
				row = r
				break
			}
		}
	}
	switch {
	case rep.Status == Drift && !ok:
		// No node drifts: a Service's slices differ from its plan, or a DNS replica drifts.
		if line, next := planLine(rep.Services); line != "" {
			return line, next
		}
		return dnsLine(rep.DNS, rep.Status)
	case !ok && dnsHas(rep.DNS, rep.Status):
		return dnsLine(rep.DNS, rep.Status)
	case len(rep.Nodes) == 0:
		return "no node to verify: the cluster has no Node objects", "kubectl get nodes"
	case rep.Status == OK && len(rep.Nodes) == 1 && len(rep.OnlyNodes) > 0:
		return fmt.Sprintf("node %s's proxy programmed what the slices say (the other nodes were not read)", rep.Nodes[0].Node), ""
	case rep.Status == OK && len(rep.OnlyNodes) > 0:
		return fmt.Sprintf("the %d named nodes' proxies programmed what the slices say (the other nodes were not read)", len(rep.Nodes)), ""
	case rep.Status == OK:
		return fmt.Sprintf("every node's proxy programmed what the slices say (%s)", english.Plural(len(rep.Nodes), "node", "nodes")), ""
	case !ok && rep.Status == Unknown:
		return failedPlanLine(rep.Services)
	case !ok:
		return "", ""
	case rep.Status == Drift:
		return driftLine(row), logsCommand(row)
	case rep.Status == Pending:
		return fmt.Sprintf("node %s: %s", row.Node, row.Reason), strings.TrimSpace("kubectl slices verify " + target + " --settle")
	}
	return unknownLine(row), unknownNext(row)
}

func first(rows []NodeRow, s Status) (NodeRow, bool) {
	for _, r := range rows {
		if r.Status == s {
			return r, true
		}
	}
	return NodeRow{}, false
}

// driftLine names the node, the first finding and since when; a node
// drifting with no finding (its rules unread, its /healthz stale) by its
// reason.
func driftLine(r NodeRow) string {
	if len(r.Missing)+len(r.Extra) == 0 {
		return fmt.Sprintf("node %s: %s", r.Node, r.Reason)
	}
	var f Finding
	var verb string
	for _, c := range []struct {
		list []Finding
		verb string
	}{{r.Missing, "lacks"}, {r.Extra, "has an extra"}} {
		for _, x := range c.list {
			if !x.Pending && verb == "" {
				f, verb = x, c.verb
			}
		}
	}
	line := fmt.Sprintf("node %s: %s %s %s", r.Node, r.Proxy, verb, describe(f))
	if f.Since != nil {
		line += " since at least " + f.Since.UTC().Format(time.RFC3339)
	}
	if r.LastSync != nil {
		line += fmt.Sprintf(" (it last synced %s, after that change)", r.LastSync.UTC().Format(time.RFC3339))
	}
	return line + fmt.Sprintf("; %d missing, %d extra on this node", len(r.Missing), len(r.Extra))
}

// describe words one finding.
func describe(f Finding) string {
	port := f.Service
	if f.Port != "" {
		port += ":" + f.Port
	}
	switch f.What {
	case "endpoint":
		s := fmt.Sprintf("endpoint %s of %s (chain %s)", f.Endpoint, port, f.Chain)
		if f.Endpoint == "" {
			s = fmt.Sprintf("endpoint of %s (chain %s)", port, f.Chain)
		}
		if f.Detail != "" {
			s += ": " + f.Detail
		}
		return s
	case "dispatch":
		return fmt.Sprintf("cluster IP dispatch %s of %s", f.Detail, port)
	case "no-endpoints":
		return fmt.Sprintf("no-endpoints verdict %s of %s", f.Detail, port)
	}
	return fmt.Sprintf("health check count of %s: %s", port, f.Detail)
}

func logsCommand(r NodeRow) string {
	ns, name, ok := strings.Cut(r.Pod, "/")
	if !ok {
		return ""
	}
	return fmt.Sprintf("kubectl logs -n %s %s --since=1h", ns, name)
}

func unknownLine(r NodeRow) string {
	return fmt.Sprintf("node %s could not be verified: %s", r.Node, r.Reason)
}

// unknownNext is the command that shows why a node could not be verified.
func unknownNext(r NodeRow) string {
	reasons := []string{r.Reason}
	for _, t := range r.Tiers {
		reasons = append(reasons, t.Reason)
	}
	for _, reason := range reasons {
		if right, ok := strings.CutPrefix(reason, "forbidden: needs "); ok {
			verbRes, ns, _ := strings.Cut(right, " in ")
			if ns != "" {
				return fmt.Sprintf("kubectl auth can-i %s -n %s", verbRes, ns)
			}
			return "kubectl auth can-i " + verbRes
		}
	}
	switch r.Proxy {
	case "none":
		return fmt.Sprintf("kubectl get pods -A -o wide --field-selector spec.nodeName=%s", r.Node)
	case KubeProxy:
		return fmt.Sprintf("kubectl describe node %s", r.Node)
	}
	return ""
}

// planLine names the first Service whose slices in the API differ from
// its plan, and the command that shows how.
func planLine(rows []ServiceRow) (string, string) {
	for _, r := range rows {
		if r.Plan == PlanDiffers {
			return fmt.Sprintf("service %s/%s: the slices in the API differ from its plan: %s",
				r.Namespace, r.Name, r.PlanDetail), fmt.Sprintf("kubectl slices diff svc/%s -n %s", r.Name, r.Namespace)
		}
	}
	return "", ""
}

// failedPlanLine names the first Service whose plan could not be made.
func failedPlanLine(rows []ServiceRow) (string, string) {
	for _, r := range rows {
		if r.PlanFailed {
			return fmt.Sprintf("service %s/%s: its slices could not be held against a plan: %s", r.Namespace, r.Name, r.PlanDetail),
				fmt.Sprintf("kubectl slices diff svc/%s -n %s", r.Name, r.Namespace)
		}
	}
	return "", ""
}

func dnsHas(dns []DNSRow, s Status) bool {
	_, ok := firstDNS(dns, s)
	return ok
}

func firstDNS(dns []DNSRow, s Status) (DNSRow, bool) {
	for _, d := range dns {
		if Status(d.Status) == s {
			return d, true
		}
	}
	return DNSRow{}, false
}

// dnsLine names the first DNS replica with the run's status and its logs.
func dnsLine(dns []DNSRow, s Status) (string, string) {
	d, ok := firstDNS(dns, s)
	if !ok {
		return "", ""
	}
	next := ""
	if ns, name, ok := strings.Cut(d.Replica, "/"); ok && s != Pending {
		next = fmt.Sprintf("kubectl logs -n %s %s --since=1h", ns, name)
	}
	return fmt.Sprintf("DNS replica %s: %s", d.Replica, d.Reason), next
}
