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
	if _, ev := s.Apply(report(ok("a"), ok("b")), at(0)); len(ev) != 0 {
		t.Fatalf("healthy: events %v", ev)
	}
	es, ev := s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(30))
	if len(ev) != 1 || ev[0].Reason != ReasonDrift || !ev[0].Warning || ev[0].Name != "a" ||
		!strings.Contains(ev[0].Message, "Service shop/web port http: endpoint 10.0.0.5:8080 missing") {
		t.Fatalf("drift: events %+v", ev)
	}
	if es[0].Status != verdict.Drift || es[0].Missing != 1 || !es[0].Since.Equal(at(30)) {
		t.Fatalf("drift: entry %+v", es[0])
	}
	// Still drifting, or drifting differently: told once.
	if es, ev = s.Apply(report(drifting("a", "10.0.0.6:8080"), ok("b")), at(60)); len(ev) != 0 || !es[0].Since.Equal(at(30)) {
		t.Fatalf("still drifting: events %v, since %v", ev, es[0].Since)
	}
	// PENDING or UNKNOWN in between is not a recovery.
	if _, ev = s.Apply(report(verdict.NodeRow{Node: "a", Status: verdict.Unknown, Reason: "the node is NotReady"}, ok("b")), at(90)); len(ev) != 0 {
		t.Fatalf("unknown: events %v", ev)
	}
	_, ev = s.Apply(report(ok("a"), ok("b")), at(120))
	if len(ev) != 1 || ev[0].Reason != ReasonRecovered || ev[0].Warning || !strings.Contains(ev[0].Message, "1m30s") {
		t.Fatalf("recovered: events %+v", ev)
	}
	// Flapping within the gap is not told again; after it, it is.
	if _, ev = s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(150)); len(ev) != 0 {
		t.Fatalf("drift again within the gap: events %v", ev)
	}
	if _, ev = s.Apply(report(ok("a"), ok("b")), at(180)); len(ev) != 0 {
		t.Fatalf("recovery of an untold drift: events %v", ev)
	}
	if _, ev = s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(30+600)); len(ev) != 1 {
		t.Fatalf("drift after the gap: events %v", ev)
	}
	// A node gone is forgotten: when it comes back drifting, it is told.
	s.Apply(report(ok("b")), at(700))
	if _, ev = s.Apply(report(drifting("a", "10.0.0.5:8080"), ok("b")), at(710)); len(ev) != 1 {
		t.Fatalf("a node back, drifting: events %v", ev)
	}
}

func TestStateEntries(t *testing.T) {
	var s State
	rep := report(ok("b"), verdict.NodeRow{Node: "a", Status: verdict.Unknown, Reason: "the node is NotReady"})
	rep.DNS = []verdict.DNSRow{{Replica: "kube-system/coredns-1", Result: dnsexpect.Result{Status: dnsexpect.Drift,
		Missing: []dnsexpect.Record{{Name: "web.shop.svc.cluster.local.", Type: "A", Data: "10.96.0.10"}}}}}
	es, ev := s.Apply(rep, at(0))
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
		{verdict.NodeRow{Tiers: []verdict.TierRow{{Tier: "healthz", OK: true}, {Tier: "rules", Reason: "forbidden: needs create pods/exec in kube-system"}}}, ClassForbidden},
		{verdict.NodeRow{Tiers: []verdict.TierRow{{Tier: "healthz", Reason: "context deadline exceeded"}}}, ClassUnreadable},
	} {
		if got := Class(c.row); got != c.want {
			t.Errorf("%+v: %s, want %s", c.row, got, c.want)
		}
	}
}
