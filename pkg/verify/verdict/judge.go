package verdict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// Judge judges every node and DNS replica against the Services, and each
// Service's slices against its plan, and returns the report, nodes and
// replicas in name order.
func Judge(in Input) Report {
	since := make([]*time.Time, len(in.Services))
	var rep Report
	for i, s := range in.Services {
		since[i] = lastChange(s)
		row := ServiceRow{Namespace: s.Service.Namespace, Name: s.Service.Name, Slices: len(s.Slices), LastChange: since[i]}
		row.Skipped = proxyexpect.For(s.Service, nil, proxyexpect.Node{}).Skipped
		if row.Skipped != "" {
			row.Plan, row.PlanDetail = PlanUnknown, "no proxy programs it"
		} else {
			row.Plan, row.PlanDetail = judgePlan(s, in.Nodes)
			row.PlanFailed = s.PlanFailed
		}
		rep.Services = append(rep.Services, row)
	}
	for _, n := range in.Nodes {
		rep.Nodes = append(rep.Nodes, judgeNode(in, since, n))
	}
	slices.SortFunc(rep.Nodes, func(a, b NodeRow) int { return strings.Compare(a.Node, b.Node) })
	rep.DNS = judgeDNS(in)
	rep.Status = overall(append(append([]NodeRow(nil), rep.Nodes...), dnsAsRows(rep.DNS)...))
	switch {
	case rep.Status != Drift && slices.ContainsFunc(rep.Services, func(r ServiceRow) bool { return r.Plan == PlanDiffers }):
		rep.Status = Drift
	case rep.Status != Drift && slices.ContainsFunc(rep.Services, func(r ServiceRow) bool { return r.PlanFailed }):
		// The slices could not be held against a plan: that leg is not verified.
		rep.Status = Unknown
	}
	rep.OnlyNodes = in.OnlyNodes
	rep.Diagnosis, rep.Next = diagnose(rep, in.Target)
	return rep
}

// judgeNode is one node's row.
func judgeNode(in Input, since []*time.Time, n NodeState) NodeRow {
	row := NodeRow{Node: n.Node.Name, Proxy: n.Proxy, Pod: n.Pod}
	if row.Proxy == "" {
		row.Proxy = "none"
	}
	if n.Unreadable != "" {
		row.Status, row.Reason = Unknown, n.Unreadable
		return row
	}
	row.Tiers = tiers(n)
	if m := n.Metrics.Value; m != nil {
		row.Mode = m.Mode
		row.LastSync, row.LastQueued, row.SyncFailures = newest(m.LastSync), newest(m.LastQueued), &m.SyncFailures
	}
	if h := n.Healthz.Value; h != nil {
		row.Healthy = &h.Healthy
	}
	if r := n.Rules.Value; r != nil && row.Mode == "" {
		row.Mode = string(r.Mode)
	}
	ports, hcs := expectFor(in.Services, since, proxyexpect.NodeOf(n.Node))
	row.Missing, row.Extra = compareHealthChecks(hcs, n.HealthChecks)
	if r := n.Rules.Value; r != nil {
		exp, prog, miss, extra, unchecked := compareRules(ports, *r)
		row.Unchecked = unchecked
		row.Expected, row.Programmed = exp, prog
		row.Missing, row.Extra = append(row.Missing, miss...), append(row.Extra, extra...)
		row.Evidence = evidenceOf(r.Ports)
		row.Execs, row.BytesRead = r.Execs, r.Bytes
	} else {
		for _, p := range ports {
			row.Expected += len(p.port.Cluster) + len(p.port.Local)
		}
	}
	drift := 0
	for _, f := range [][]Finding{row.Missing, row.Extra} {
		for i := range f {
			f[i].Pending = pending(in, n, f[i])
			if !f[i].Pending {
				drift++
			}
		}
	}
	row.Status, row.Reason = verdict(n, row, drift)
	return row
}

// verdict is a node's status from its findings: drift that is not pending
// is DRIFT whatever else failed; otherwise a node whose rules were not read
// is UNKNOWN, one with only pending findings PENDING.
func verdict(n NodeState, row NodeRow, drift int) (Status, string) {
	count := fmt.Sprintf("%d missing, %d extra", len(row.Missing), len(row.Extra))
	switch {
	case drift > 0:
		return Drift, count
	case n.Rules.Value == nil && stale(n.Healthz.Value):
		// Unread rules cannot show it, but kube-proxy says it: a change
		// has waited past its health timeout.
		return Drift, "kube-proxy's /healthz says it has applied no queued change for longer than its health timeout (rules not read: " +
			orNotRead(n.Rules.Err) + ")"
	case n.Rules.Value == nil:
		return Unknown, orNotRead(n.Rules.Err)
	case len(row.Unchecked) > 0:
		return Unknown, fmt.Sprintf("%d of the node's rules could not be read (%s)", len(row.Unchecked), row.Unchecked[0])
	case len(row.Missing)+len(row.Extra) > 0:
		return Pending, count + ": the proxy has not synced since the slices changed and is healthy"
	}
	return OK, ""
}

// stale: kube-proxy's /healthz answered unhealthy for its own reason, a
// queued change older than its health timeout, not because the node is
// being deleted (nodeEligible false, for load balancers' health checks).
func stale(h *Healthz) bool {
	return h != nil && !h.Healthy && (h.NodeEligible == nil || *h.NodeEligible)
}

func orNotRead(why string) string {
	if why == "" {
		return "rules not read"
	}
	return why
}

// pending says a finding is the proxy being behind, not wrong: the change
// is younger than the health timeout, /healthz says the proxy is healthy,
// and it last synced (for the finding's family, or any) before the slices
// changed, or its last sync is not known.
func pending(in Input, n NodeState, f Finding) bool {
	h := n.Healthz.Value
	if f.Since == nil || h == nil || !h.Healthy {
		return false
	}
	var last *time.Time
	if m := n.Metrics.Value; m != nil {
		if t, ok := m.LastSync[f.Family]; ok {
			last = &t
		} else {
			last = newest(m.LastSync)
		}
	}
	// Past the health timeout a proxy that has not synced the change is
	// not behind but failing, whatever its /healthz says.
	if in.Now.Sub(*f.Since) >= in.HealthTimeout {
		return false
	}
	if last != nil {
		return last.Before(*f.Since)
	}
	return true
}

// tiers lists what each tier answered on the node.
func tiers(n NodeState) []TierRow {
	rows := []TierRow{tierRow(TierHealthz, n.Healthz.Value != nil, n.Healthz.Err)}
	keys := make([]string, 0, len(n.HealthChecks))
	for k := range n.HealthChecks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r := n.HealthChecks[k]
		rows = append(rows, tierRow("health-check "+k, r.Value != nil, r.Err))
	}
	rows = append(rows, tierRow(TierMetrics, n.Metrics.Value != nil, n.Metrics.Err))
	return append(rows, tierRow(TierRules, n.Rules.Value != nil, n.Rules.Err))
}

func tierRow(name string, ok bool, err string) TierRow {
	if !ok && err == "" {
		err = "not tried"
	}
	return TierRow{Tier: name, OK: ok, Reason: err}
}

func newest(m map[string]time.Time) *time.Time {
	var out *time.Time
	for _, t := range m {
		if out == nil || t.After(*out) {
			t := t
			out = &t
		}
	}
	return out
}

// dnsAsRows lets the DNS replicas' statuses count in the run's: they
// share the four values.
func dnsAsRows(dns []DNSRow) []NodeRow {
	out := make([]NodeRow, 0, len(dns))
	for _, d := range dns {
		out = append(out, NodeRow{Status: Status(d.Status)})
	}
	return out
}

// overall is the run's status: DRIFT when any node drifts, else UNKNOWN
// when any could not be verified, else PENDING when any is behind, else
// OK (also with no node at all: nothing disagrees).
func overall(rows []NodeRow) Status {
	seen := map[Status]bool{}
	for _, r := range rows {
		seen[r.Status] = true
	}
	for _, s := range []Status{Drift, Unknown, Pending} {
		if seen[s] {
			return s
		}
	}
	return OK
}

// Ready says whether the node's Ready condition is True.
func Ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
