package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

func report(nodes ...verdict.NodeRow) verdict.Report { return verdict.Report{Nodes: nodes} }

func ok(name string) verdict.NodeRow { return verdict.NodeRow{Node: name, Status: verdict.OK} }

func drifting(name, endpoint string) verdict.NodeRow {
	return verdict.NodeRow{Node: name, Status: verdict.Drift,
		Missing: []verdict.Finding{{Service: "shop/web", Port: "http", What: "endpoint", Endpoint: endpoint}}}
}

func TestStateTellsDriftOnceAndRecovery(t *testing.T) {
	s := State{MinGap: 10 * time.Minute}
	if _, ev := s.Apply(report(ok("a"), ok("b")), at(0), nil); len(ev) != 0 {
		t.Fatalf("healthy: events %v", ev)
	}
	es, ev := s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(30), nil)
	if len(ev) != 1 || ev[0].Reason != ReasonDrift || !ev[0].Warning || ev[0].Name != "a" ||
		!strings.Contains(ev[0].Message, "Service shop/web port http: endpoint 10.0.0.5:8080 missing") {
		t.Fatalf("drift: events %+v", ev)
	}
	if es[0].Status != verdict.Drift || es[0].Missing != 1 || !es[0].Since.Equal(at(30)) {
		t.Fatalf("drift: entry %+v", es[0])
	}
	// Still drifting, or drifting differently: told once.
	if es, ev = s.Apply(report(drifting("a", "10.0.0.6:8080"), ok("b")), at(60), nil); len(ev) != 0 || !es[0].Since.Equal(at(30)) {
		t.Fatalf("still drifting: events %v, since %v", ev, es[0].Since)
	}
	// PENDING or UNKNOWN in between is not a recovery.
	if _, ev = s.Apply(report(verdict.NodeRow{Node: "a", Status: verdict.Unknown, Reason: "the node is NotReady"}, ok("b")), at(90), nil); len(ev) != 0 {
		t.Fatalf("unknown: events %v", ev)
	}
	_, ev = s.Apply(report(ok("a"), ok("b")), at(120), nil)
	if len(ev) != 1 || ev[0].Reason != ReasonRecovered || ev[0].Warning || !strings.Contains(ev[0].Message, "1m30s") {
		t.Fatalf("recovered: events %+v", ev)
	}
	// Flapping within the gap is not told again; after it, it is.
	if _, ev = s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(150), nil); len(ev) != 0 {
		t.Fatalf("drift again within the gap: events %v", ev)
	}
	if _, ev = s.Apply(report(ok("a"), ok("b")), at(180), nil); len(ev) != 0 {
		t.Fatalf("recovery of an untold drift: events %v", ev)
	}
	if _, ev = s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(30+600), nil); len(ev) != 1 {
		t.Fatalf("drift after the gap: events %v", ev)
	}
	// A node gone is forgotten: when it comes back drifting, it is told.
	s.Apply(report(ok("b")), at(700), nil)
	if _, ev = s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(710), nil); len(ev) != 1 {
		t.Fatalf("a node back, drifting: events %v", ev)
	}
}

func TestStateEntries(t *testing.T) {
	var s State
	rep := report(ok("b"), verdict.NodeRow{Node: "a", Status: verdict.Unknown, Reason: "the node is NotReady"})
	rep.DNS = []verdict.DNSRow{{Replica: "kube-system/coredns-1", Result: dnsexpect.Result{Status: dnsexpect.Drift,
		Missing: []dnsexpect.Record{{Name: "web.shop.svc.cluster.local.", Type: "A", Data: "10.96.0.10"}}}}}
	es, ev := s.Apply(rep, at(0), nil)
	if len(es) != 3 || es[0].Name != "a" || es[0].Class != ClassNotReady || es[1].Name != "b" || es[2].Kind != Replica {
		t.Fatalf("entries %+v", es)
	}
	if len(ev) != 1 || ev[0].Kind != Replica || !strings.Contains(ev[0].Message, "DNS replica kube-system/coredns-1") ||
		!strings.Contains(ev[0].Message, "record A web.shop.svc.cluster.local. 10.96.0.10 missing") {
		t.Fatalf("events %+v", ev)
	}
}

func TestClass(t *testing.T) {
	for _, c := range []struct {
		row  verdict.NodeRow
		want string
	}{
		{verdict.NodeRow{Reason: "the node is NotReady"}, ClassNotReady},
		{verdict.NodeRow{Reason: "no kube-proxy Pod on the node (kube-system, k8s-app=kube-proxy)"}, ClassNoProxy},
		{verdict.NodeRow{Reason: "forbidden: needs list pods in kube-system"}, ClassForbidden},
		{verdict.NodeRow{Reason: "cannot list the Pods of kube-system: timeout"}, ClassUnreadable},
		{verdict.NodeRow{Reason: "forbidden: needs create pods/exec in kube-system", Tiers: []verdict.TierRow{{Tier: "healthz", OK: true}, {Tier: "rules", Reason: "forbidden: needs create pods/exec in kube-system"}}}, ClassForbidden},
		// The rules tier decided, not the metrics tier also denied.
		{verdict.NodeRow{Reason: "no answer within the node timeout", Tiers: []verdict.TierRow{{Tier: "metrics", Reason: "forbidden: needs create pods/portforward in kube-system"}, {Tier: "rules", Reason: "no answer within the node timeout"}}}, ClassUnreadable},
		{verdict.NodeRow{Reason: "kube-proxy Pod kube-system/kube-proxy-x is Pending, not Running"}, ClassNoProxy},
		{verdict.NodeRow{Reason: "rules not read", Tiers: []verdict.TierRow{{Tier: "healthz", Reason: "context deadline exceeded"}}}, ClassUnreadable},
	} {
		if got := Class(c.row); got != c.want {
			t.Errorf("%+v: %s, want %s", c.row, got, c.want)
		}
	}
}

// With the healthz tier only a node is never OK: kube-proxy saying it is
// healthy again (UNKNOWN, forbidden: rules unread) is the recovery, and a
// later drift is told again.
func TestStateRecoversWithoutTheRulesTier(t *testing.T) {
	s := State{MinGap: 10 * time.Minute}
	unread := verdict.NodeRow{Node: "a", Status: verdict.Unknown, Reason: "forbidden: needs create pods/exec in kube-system",
		Tiers: []verdict.TierRow{{Tier: "healthz", OK: true}, {Tier: "rules", Reason: "forbidden: needs create pods/exec in kube-system"}}}
	stale := verdict.NodeRow{Node: "a", Status: verdict.Drift, Reason: "kube-proxy's /healthz says it has applied no queued change for longer than its health timeout"}
	s.Apply(report(unread), at(0), nil)
	if _, ev := s.Apply(report(stale), at(30), nil); len(ev) != 1 || ev[0].Reason != ReasonDrift || !strings.Contains(ev[0].Message, "/healthz says") {
		t.Fatalf("stale: events %+v", ev)
	}
	if _, ev := s.Apply(report(unread), at(60), nil); len(ev) != 1 || ev[0].Reason != ReasonRecovered {
		t.Fatalf("healthy again: events %+v", ev)
	}
	if _, ev := s.Apply(report(stale), at(3600), nil); len(ev) != 1 || ev[0].Reason != ReasonDrift {
		t.Fatalf("stale an hour later: events %+v", ev)
	}
}

// A node read after its proxy applied a change that came while the round
// read disagrees with the slices the round planned from: PENDING, no
// Event. A finding about another Service is still DRIFT.
func TestStateChangeDuringTheRoundIsPending(t *testing.T) {
	var s State
	changed := map[string]bool{"shop/web": true}
	es, ev := s.Apply(report(drifting("a", "10.0.0.5:8080")), at(0), changed)
	if es[0].Status != verdict.Pending || len(ev) != 0 {
		t.Fatalf("a change during the round: %+v, events %v", es[0], ev)
	}
	es, ev = s.Apply(report(drifting("a", "10.0.0.5:8080")), at(30), map[string]bool{"shop/other": true})
	if es[0].Status != verdict.Drift || len(ev) != 1 {
		t.Fatalf("another Service changed: %+v, events %v", es[0], ev)
	}
	rep := verdict.Report{DNS: []verdict.DNSRow{{Replica: "kube-system/coredns-1", Result: dnsexpect.Result{Status: dnsexpect.Drift}}}}
	if es, _ := s.Apply(rep, at(60), changed); es[0].Status != verdict.Pending {
		t.Fatalf("a replica during a change: %+v", es[0])
	}
	rep.DNS[0].Result = dnsexpect.Result{Status: dnsexpect.Unknown, Reason: "forbidden: needs create pods/portforward in kube-system"}
	if es, _ := s.Apply(rep, at(90), nil); es[0].Class != ClassForbidden {
		t.Fatalf("a replica not asked for want of a right: class %q", es[0].Class)
	}
}
