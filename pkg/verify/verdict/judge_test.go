package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

func findings(fs []Finding) string {
	var out []string
	for _, f := range fs {
		s := f.What + " " + f.Endpoint
		if f.Pending {
			s += " (pending)"
		}
		out = append(out, strings.TrimSpace(s))
	}
	return strings.Join(out, ", ")
}

func TestAgreeingNodeIsOK(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	read := programmed(svcs, n)
	read.Execs, read.Bytes = 2, 1234
	rep := run(svcs, healthyNode(n, read, t0))
	row := rep.Nodes[0]
	if row.Status != OK || rep.Status != OK || row.Expected != 2 || row.Programmed != 2 || row.Mode != "nftables" || row.Execs != 2 || row.BytesRead != 1234 ||
		row.Healthy == nil || !*row.Healthy || row.SyncFailures == nil || !row.LastSync.Equal(t0) {
		t.Fatalf("got %+v", row)
	}
	if rep.Next != "" || rep.Diagnosis != "every node's proxy programmed what the slices say (1 node)" {
		t.Fatalf("diagnosis %q next %q", rep.Diagnosis, rep.Next)
	}
	// --node named it: the verdict says the others were not read.
	only := Judge(Input{Services: svcs, Nodes: []NodeState{healthyNode(n, read, t0)}, Now: t0, HealthTimeout: time.Minute, OnlyNodes: []string{"node-a"}})
	if only.Status != OK || only.Diagnosis != "node node-a's proxy programmed what the slices say (the other nodes were not read)" ||
		strings.Join(only.OnlyNodes, ",") != "node-a" {
		t.Fatalf("--node node-a: %s, diagnosis %q, onlyNodes %v", only.Status, only.Diagnosis, only.OnlyNodes)
	}
}

func TestMissingAndExtraEndpoints(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	r := programmed(svcs, n)
	r.Ports[0].Cluster.Endpoints = []string{"10.0.0.1:8080", "10.0.0.9:8080"}
	rep := run(svcs, healthyNode(n, r, t0)) // synced after the change
	row := rep.Nodes[0]
	if row.Status != Drift || rep.Status != Drift {
		t.Fatalf("status %s, want DRIFT", row.Status)
	}
	if got := findings(row.Missing); got != "endpoint 10.0.0.2:8080" {
		t.Errorf("missing %q", got)
	}
	if got := findings(row.Extra); got != "endpoint 10.0.0.9:8080" {
		t.Errorf("extra %q", got)
	}
	if ev := row.Evidence; len(ev) != 1 || ev[0].Service != "default/web" || ev[0].Port != "http" || ev[0].ClusterIP != "10.96.0.10" ||
		strings.Join(ev[0].Cluster.Endpoints, ",") != "10.0.0.1:8080,10.0.0.9:8080" || !ev[0].Dispatch {
		t.Errorf("evidence %+v", ev)
	}
	if !strings.Contains(rep.Diagnosis, "lacks endpoint 10.0.0.2:8080 of default/web:http") || rep.Next != "kubectl logs -n kube-system kube-proxy-a --since=1h" {
		t.Errorf("diagnosis %q next %q", rep.Diagnosis, rep.Next)
	}
}

func TestDispatchAndNoEndpoints(t *testing.T) {
	n := node("node-a")
	svcs := []Service{web("10.0.0.1")}
	r := programmed(svcs, n)
	r.Ports[0].Dispatch = false
	if got := findings(run(svcs, healthyNode(n, r, t0)).Nodes[0].Missing); got != "dispatch" {
		t.Errorf("a missing dispatch: missing %q", got)
	}
	r = programmed(svcs, n)
	r.Ports[0].NoEndpoints = true
	if got := findings(run(svcs, healthyNode(n, r, t0)).Nodes[0].Extra); got != "no-endpoints" {
		t.Errorf("a no-endpoints verdict on a port with endpoints: extra %q", got)
	}
	empty := []Service{web()}
	r = programmed(empty, n)
	r.Ports[0].NoEndpoints = false
	r.Ports[0].Dispatch = true
	row := run(empty, healthyNode(n, r, t0)).Nodes[0]
	if findings(row.Missing) != "no-endpoints" || findings(row.Extra) != "dispatch" {
		t.Errorf("a port without endpoints dispatched: missing %q extra %q", findings(row.Missing), findings(row.Extra))
	}
}

func TestInternalLocalWithoutLocalEndpointIsNotDispatched(t *testing.T) {
	s := web("10.0.0.1")
	s.Service.Spec.InternalTrafficPolicy = ptr(corev1InternalLocal)
	svcs := []Service{s}
	n := node("node-b") // the endpoint is on node-a
	r := proxyread.Reading{Ports: []proxyread.PortState{{Want: Wants(svcs, n)[0], NoEndpoints: true}}}
	if row := run(svcs, healthyNode(n, r, t0)).Nodes[0]; row.Status != OK {
		t.Fatalf("status %s: missing %q extra %q", row.Status, findings(row.Missing), findings(row.Extra))
	}
}

func TestPendingWhenSyncedBeforeTheChange(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	r := programmed(svcs, n)
	r.Ports[0].Cluster.Endpoints = r.Ports[0].Cluster.Endpoints[:1]
	rep := run(svcs, healthyNode(n, r, changed.Add(-time.Second)))
	if rep.Nodes[0].Status != Pending || rep.Status != Pending || rep.Next != "kubectl slices verify svc/web --settle" {
		t.Fatalf("synced before the change, healthy: %s (next %q), want PENDING", rep.Nodes[0].Status, rep.Next)
	}
	unhealthy := healthyNode(n, r, changed.Add(-time.Second))
	unhealthy.Healthz = Answered(Healthz{Healthy: false})
	if got := run(svcs, unhealthy).Nodes[0].Status; got != Drift {
		t.Fatalf("synced before the change, past its health timeout: %s, want DRIFT", got)
	}
	if got := run(svcs, healthyNode(n, r, changed.Add(time.Second))).Nodes[0].Status; got != Drift {
		t.Fatalf("synced after the change: %s, want DRIFT", got)
	}
}

func TestPendingWithoutMetricsWithinHealthTimeout(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	r := programmed(svcs, n)
	r.Ports[0].Cluster.Endpoints = nil
	st := healthyNode(n, r, t0)
	st.Metrics = Denied[Metrics]("create pods/portforward in kube-system")
	in := Input{Services: svcs, Nodes: []NodeState{st}, Now: t0, HealthTimeout: time.Minute}
	if got := Judge(in).Nodes[0].Status; got != Pending {
		t.Fatalf("a change 10s old, health timeout 1m: %s, want PENDING", got)
	}
	in.HealthTimeout = 5 * time.Second
	if got := Judge(in).Nodes[0].Status; got != Drift {
		t.Fatalf("a change 10s old, health timeout 5s: %s, want DRIFT", got)
	}
}

func TestUnknownNodes(t *testing.T) {
	svcs := []Service{web("10.0.0.1")}
	good := node("node-a")
	forbidden := healthyNode(node("node-b"), proxyread.Reading{}, t0)
	forbidden.Rules = Denied[proxyread.Reading]("create pods/exec in kube-system")
	none := NodeState{Node: node("node-c"), Unreadable: "no kube-proxy Pod on the node"}
	cilium := NodeState{Node: node("node-d"), Proxy: Cilium, Unreadable: "cilium is not kube-proxy: not supported"}
	rep := run(svcs, cilium, none, forbidden, healthyNode(good, programmed(svcs, good), t0))
	want := map[string]Status{"node-a": OK, "node-b": Unknown, "node-c": Unknown, "node-d": Unknown}
	for _, r := range rep.Nodes {
		if r.Status != want[r.Node] {
			t.Errorf("%s: %s, want %s (%s)", r.Node, r.Status, want[r.Node], r.Reason)
		}
	}
	if rep.Status != Unknown || rep.Nodes[0].Node != "node-a" {
		t.Fatalf("overall %s, order %v", rep.Status, rep.Nodes)
	}
	if rep.Nodes[1].Reason != "forbidden: needs create pods/exec in kube-system" || rep.Next != "kubectl auth can-i create pods/exec -n kube-system" ||
		!strings.HasPrefix(rep.Diagnosis, "node node-b could not be verified: forbidden") {
		t.Errorf("reason %q next %q", rep.Nodes[1].Reason, rep.Next)
	}
	if rep.Nodes[1].Expected != 1 {
		t.Errorf("expected %d on an unread node, want 1", rep.Nodes[1].Expected)
	}
}

func TestDriftWinsOverUnknownRules(t *testing.T) {
	s := web("10.0.0.1")
	s.Service.Spec.Type = "LoadBalancer"
	s.Service.Spec.ExternalTrafficPolicy = "Local"
	s.Service.Spec.HealthCheckNodePort = 30500
	s.Service.Spec.Ports[0].NodePort = 30080
	svcs := []Service{s}
	st := healthyNode(node("node-a"), proxyread.Reading{}, t0)
	st.Rules = Denied[proxyread.Reading]("create pods/exec in kube-system")
	st.HealthChecks = map[string]Result[HealthCheck]{"default/web": Answered(HealthCheck{LocalEndpoints: 0})}
	row := run(svcs, st).Nodes[0]
	if row.Status != Drift || findings(row.Missing) != "health-check" {
		t.Fatalf("kube-proxy counts 0 local endpoints, the slices 1: %s missing %q", row.Status, findings(row.Missing))
	}
	st.HealthChecks["default/web"] = Answered(HealthCheck{LocalEndpoints: 1})
	if row := run(svcs, st).Nodes[0]; row.Status != Unknown {
		t.Fatalf("counts agree, rules unread: %s, want UNKNOWN", row.Status)
	}
}

func TestOverallOrder(t *testing.T) {
	for _, c := range []struct {
		in   []Status
		want Status
	}{{[]Status{OK, Pending}, Pending}, {[]Status{Pending, Unknown}, Unknown}, {[]Status{Unknown, Drift, OK}, Drift}, {nil, OK}} {
		var rows []NodeRow
		for _, s := range c.in {
			rows = append(rows, NodeRow{Status: s})
		}
		if got := overall(rows); got != c.want {
			t.Errorf("%v: %s, want %s", c.in, got, c.want)
		}
	}
}

func TestLastChangeIsTheNewestSliceChange(t *testing.T) {
	s := web("10.0.0.1")
	later := s.Slices[0].DeepCopy()
	later.Annotations[corev1LastChange] = t0.Format(time.RFC3339Nano)
	s.Slices = append(s.Slices, later)
	if got := lastChange(s); got == nil || !got.Equal(t0) {
		t.Fatalf("got %v, want %v", got, t0)
	}
	if got := run([]Service{s}).Services[0]; got.Slices != 2 || !got.LastChange.Equal(t0) {
		t.Fatalf("service row %+v", got)
	}
}

func TestDiagnosisNamesTheMissingRightFirst(t *testing.T) {
	svcs := []Service{web("10.0.0.1")}
	none := NodeState{Node: node("node-a"), Unreadable: "no kube-proxy Pod on the node"}
	forbidden := healthyNode(node("node-z"), proxyread.Reading{}, t0)
	forbidden.Rules = Denied[proxyread.Reading]("create pods/exec in kube-system")
	rep := run(svcs, none, forbidden)
	if rep.Next != "kubectl auth can-i create pods/exec -n kube-system" || !strings.Contains(rep.Diagnosis, "node node-z") {
		t.Fatalf("diagnosis %q next %q", rep.Diagnosis, rep.Next)
	}
}

func TestSlicesThatDifferFromThePlan(t *testing.T) {
	n := node("node-a")
	planned := web("10.0.0.1", "10.0.0.2")
	s := web("10.0.0.1")
	s.Planned = planned.Slices
	svcs := []Service{s}
	rep := run(svcs, healthyNode(n, programmed(svcs, n), t0))
	if rep.Nodes[0].Status != OK || rep.Status != Drift || rep.Services[0].Plan != PlanDiffers {
		t.Fatalf("node %s, run %s, plan %s", rep.Nodes[0].Status, rep.Status, rep.Services[0].Plan)
	}
	if want := "service default/web: the slices in the API differ from its plan: node node-a: IPv4 port http: the plan reaches 10.0.0.2:8080, the slices in the API do not"; rep.Diagnosis != want || rep.Next != "kubectl slices diff svc/web -n default" {
		t.Errorf("diagnosis %q\nnext %q", rep.Diagnosis, rep.Next)
	}
	// Another packing of the same endpoints agrees, also in a slice the
	// plan creates (no name yet): a proxy does not see it.
	repacked := web("10.0.0.1")
	repacked.Slices[0].Name, repacked.Slices[0].GenerateName = "", "web-"
	s.Planned = repacked.Slices
	if rep := run([]Service{s}, healthyNode(n, programmed(svcs, n), t0)); rep.Services[0].Plan != PlanAgrees || rep.Status != OK {
		t.Errorf("the same endpoints in another slice: plan %s, run %s", rep.Services[0].Plan, rep.Status)
	}
	s.PlanUnknown = "pods in default cannot be listed"
	if rep := run([]Service{s}, healthyNode(n, programmed(svcs, n), t0)); rep.Services[0].Plan != PlanUnknown || rep.Status != OK {
		t.Errorf("no plan: plan %s, run %s", rep.Services[0].Plan, rep.Status)
	}
}

func TestDispatchTargetAndNoEndpointsVerdict(t *testing.T) {
	n := node("node-a")
	svcs := []Service{web("10.0.0.1")}
	r := programmed(svcs, n)
	r.Ports[0].Local.Name = "local-X-web"
	r.Ports[0].DispatchTarget = r.Ports[0].Cluster.Name
	if row := run(svcs, healthyNode(n, r, t0)).Nodes[0]; row.Status != OK {
		t.Fatalf("dispatch to the Cluster chain under Cluster policy: %s %q", row.Status, findings(row.Missing))
	}
	r.Ports[0].DispatchTarget = "local-X-web"
	if row := run(svcs, healthyNode(n, r, t0)).Nodes[0]; row.Status != Drift || findings(row.Missing) != "dispatch" {
		t.Errorf("dispatch to the Local chain under Cluster policy: %s missing %q", row.Status, findings(row.Missing))
	}

	// internalTrafficPolicy Local on a node without a local endpoint, while
	// the Service has one elsewhere: kube-proxy drops, it does not reject.
	s := web("10.0.0.1")
	s.Service.Spec.InternalTrafficPolicy = ptr(corev1InternalLocal)
	local := []Service{s}
	nb := node("node-b")
	for _, tc := range []struct {
		verdict string
		want    Status
	}{{"drop", OK}, {"reject", Drift}} {
		r := proxyread.Reading{Ports: []proxyread.PortState{{Want: Wants(local, nb)[0], NoEndpoints: true, NoEndpointsVerdict: tc.verdict}}}
		if row := run(local, healthyNode(nb, r, t0)).Nodes[0]; row.Status != tc.want {
			t.Errorf("%s on a node without local endpoints: %s, want %s", tc.verdict, row.Status, tc.want)
		}
	}
	empty := []Service{web()}
	r = programmed(empty, n)
	for _, tc := range []struct {
		verdict string
		want    Status
	}{{"reject", OK}, {"drop", Drift}} {
		r.Ports[0].NoEndpointsVerdict = tc.verdict
		if row := run(empty, healthyNode(n, r, t0)).Nodes[0]; row.Status != tc.want {
			t.Errorf("%s for a Service without endpoints: %s, want %s", tc.verdict, row.Status, tc.want)
		}
	}
}

func TestUnreadableRulesAreUncheckedNotMissing(t *testing.T) {
	n := node("node-a")
	svcs := []Service{web("10.0.0.1")}
	r := programmed(svcs, n)
	r.Ports[0].Dispatch, r.Ports[0].Unreadable = false, "answer cut"
	r.Ports[0].Cluster = proxyread.Chain{Name: r.Ports[0].Cluster.Name, Unreadable: "answer cut"}
	row := run(svcs, healthyNode(n, r, t0)).Nodes[0]
	if row.Status != Unknown || len(row.Missing)+len(row.Extra) != 0 || len(row.Unchecked) != 2 || !strings.Contains(row.Reason, "answer cut") {
		t.Fatalf("unreadable rules: %s %q, missing %q extra %q unchecked %q", row.Status, row.Reason, findings(row.Missing), findings(row.Extra), row.Unchecked)
	}
	// A difference read elsewhere still drifts.
	two := []Service{web("10.0.0.1"), web("10.0.0.2")}
	two[1].Service.Name, two[1].Slices[0].Labels[discoveryv1LabelServiceName] = "db", "db"
	r = programmed(two, n)
	r.Ports[0].Unreadable = "answer cut"
	r.Ports[1].Cluster.Endpoints = nil
	if row := run(two, healthyNode(n, r, t0)).Nodes[0]; row.Status != Drift {
		t.Errorf("an unreadable port beside a missing endpoint: %s", row.Status)
	}
}

func TestAPlanThatCouldNotBeMadeIsNotVerified(t *testing.T) {
	n := node("node-a")
	s := web("10.0.0.1")
	s.PlanUnknown, s.PlanFailed = "cannot plan: endpoints \"web\" is forbidden", true
	svcs := []Service{s}
	rep := run(svcs, healthyNode(n, programmed(svcs, n), t0))
	if rep.Status != Unknown || !rep.Services[0].PlanFailed || !strings.Contains(rep.Diagnosis, "default/web") || rep.Next == "" {
		t.Fatalf("run %s, diagnosis %q, next %q", rep.Status, rep.Diagnosis, rep.Next)
	}
	// A Service the controller does not plan is no verdict either way.
	s.PlanUnknown, s.PlanFailed = "not planned: no selector", false
	if rep := run([]Service{s}, healthyNode(n, programmed(svcs, n), t0)); rep.Status != OK {
		t.Errorf("not planned: run %s", rep.Status)
	}
}

func TestPendingEndsAtTheHealthTimeout(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	r := programmed(svcs, n)
	r.Ports[0].Cluster.Endpoints = r.Ports[0].Cluster.Endpoints[:1]
	// The slices changed 10 s before t0; the proxy last synced before that.
	for _, tc := range []struct {
		timeout time.Duration
		want    Status
	}{{time.Minute, Pending}, {5 * time.Second, Drift}} {
		in := Input{Services: svcs, Nodes: []NodeState{healthyNode(n, r, changed.Add(-time.Hour))}, Now: t0, HealthTimeout: tc.timeout}
		if got := Judge(in).Nodes[0].Status; got != tc.want {
			t.Errorf("health timeout %s: %s, want %s", tc.timeout, got, tc.want)
		}
	}
}

// Without the rules tier, a kube-proxy whose /healthz says it is stale (a
// queued change past its health timeout) is DRIFT: it says so itself. A
// healthy one is UNKNOWN (nothing shows its rules are right), and so is
// one unhealthy only because its node is being deleted.
func TestStaleHealthzWithoutRulesIsDrift(t *testing.T) {
	svcs := []Service{web("10.0.0.1")}
	st := healthyNode(node("node-a"), proxyread.Reading{}, t0)
	st.Rules = Denied[proxyread.Reading]("create pods/exec in kube-system")
	if row := run(svcs, st).Nodes[0]; row.Status != Unknown {
		t.Fatalf("healthy, rules unread: %s, want UNKNOWN", row.Status)
	}
	st.Healthz.Value.Healthy = false
	row := run(svcs, st).Nodes[0]
	if row.Status != Drift || !strings.Contains(row.Reason, "health timeout") || !strings.Contains(row.Reason, "create pods/exec") {
		t.Fatalf("stale, rules unread: %s %q, want DRIFT saying why", row.Status, row.Reason)
	}
	if rep := run(svcs, st); !strings.HasPrefix(rep.Diagnosis, "node node-a: kube-proxy's /healthz says") {
		t.Errorf("diagnosis %q", rep.Diagnosis)
	}
	st.Healthz.Value.NodeEligible = ptr(false)
	if row := run(svcs, st).Nodes[0]; row.Status != Unknown {
		t.Fatalf("unhealthy as its node is deleted: %s, want UNKNOWN", row.Status)
	}
}
