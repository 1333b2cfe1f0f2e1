package verdict

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
)

// headlessDB is a headless Service whose one slice, made at changedAt,
// holds a ready 10.0.0.1 and a not-ready 10.0.0.2.
func headlessDB(name string, changedAt time.Time) Service {
	at := metav1.NewTime(changedAt)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: at},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": name}}}
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name + "-1", CreationTimestamp: at,
		Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}},
			{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false)}}}}
	return Service{Service: svc, Slices: []*discoveryv1.EndpointSlice{sl}}
}

// answers answers every question the Services call for as expected; a
// stale replica also still serves 10.0.0.2 under each Service's name.
func answers(svcs []Service, stale bool) []dnsexpect.Answer {
	var out []dnsexpect.Answer
	for _, qs := range DNSQuestions(svcs, "cluster.local") {
		for _, q := range qs {
			a := dnsexpect.Answer{Name: q.Name, Type: q.Type, Rcode: "NOERROR", Records: q.Want}
			if stale && q.Type == dnsexpect.TypeA && strings.Count(q.Name, ".") == 5 {
				a.Records = append(append([]dnsexpect.Record(nil), q.Want...), dnsexpect.Record{Name: q.Name, Type: q.Type, Data: "10.0.0.2"})
			}
			out = append(out, a)
		}
	}
	return out
}

func dnsInput(svcs []Service, timing dnsexpect.Timing, dns ...DNSReading) Input {
	return Input{Services: svcs, Now: t0, HealthTimeout: time.Minute, Domain: "cluster.local", DNSTiming: timing, DNS: dns}
}

func TestDNSRowPerReplica(t *testing.T) {
	svcs := []Service{headlessDB("db", t0.Add(-time.Hour))}
	in := dnsInput(svcs, dnsexpect.DefaultTiming(time.Time{}, time.Time{}),
		DNSReading{Replica: "kube-system/coredns-c", Unreadable: "port-forward to TCP 53: refused"},
		DNSReading{Replica: "kube-system/coredns-b", Address: "10.244.0.9", Answers: answers(svcs, true), At: t0},
		DNSReading{Replica: "kube-system/coredns-a", Address: "10.244.0.8", Answers: answers(svcs, false), At: t0})
	rows := Judge(in).DNS
	var order []string
	for _, r := range rows {
		order = append(order, r.Replica)
	}
	if strings.Join(order, ",") != "kube-system/coredns-a,kube-system/coredns-b,kube-system/coredns-c" {
		t.Fatalf("rows %v, want one per replica in name order", order)
	}
	if r := rows[0]; r.Status != dnsexpect.OK || r.Address != "10.244.0.8" {
		t.Errorf("replica a answers the ready address alone: %s %s %q", r.Status, r.Reason, r.Address)
	}
	if r := rows[1]; r.Status != dnsexpect.Drift || !strings.Contains(r.Reason, "10.0.0.2") {
		t.Errorf("replica b also answers the not-ready address, an hour after the change: %s %s", r.Status, r.Reason)
	}
	if r := rows[2]; r.Status != dnsexpect.Unknown || r.Reason != "port-forward to TCP 53: refused" || r.Answers == nil {
		t.Errorf("replica c could not be asked: %+v", r)
	}
	if in.DNS[0].Replica != "kube-system/coredns-c" {
		t.Errorf("the input's readings were reordered")
	}
}

// Each Service's answers are judged from its own last change: the same
// stale answer is DRIFT for a Service changed an hour ago and PENDING for
// one changed 20 s ago, within the window of a cached cluster domain
// (35 s), and DRIFT for it too under kubeadm's Corefile (5 s).
func TestDNSWindowPerServiceAndCorefile(t *testing.T) {
	old, recent := []Service{headlessDB("db", t0.Add(-time.Hour))}, []Service{headlessDB("db", t0.Add(-20*time.Second))}
	cached := dnsexpect.DefaultTiming(time.Time{}, time.Time{})
	kubeadm := dnsexpect.Timing{PluginTTL: 30 * time.Second, Slack: 5 * time.Second}
	for _, c := range []struct {
		what   string
		svcs   []Service
		timing dnsexpect.Timing
		want   dnsexpect.Status
	}{
		{"changed an hour ago", old, cached, dnsexpect.Drift},
		{"changed 20 s ago, domain cached", recent, cached, dnsexpect.Pending},
		{"changed 20 s ago, kubeadm's Corefile", recent, kubeadm, dnsexpect.Drift},
	} {
		in := dnsInput(c.svcs, c.timing, DNSReading{Replica: "kube-system/coredns-a", Answers: answers(c.svcs, true), At: t0})
		if r := Judge(in).DNS[0]; r.Status != c.want {
			t.Errorf("%s: %s %s, want %s", c.what, r.Status, r.Reason, c.want)
		}
	}
	both := append(append([]Service(nil), old...), headlessDB("cache", t0.Add(-20*time.Second)))
	in := dnsInput(both, cached, DNSReading{Replica: "kube-system/coredns-a", Answers: answers(both, true), At: t0})
	if r := Judge(in).DNS[0]; r.Status != dnsexpect.Drift || !strings.Contains(r.Reason, "db.ns.svc") {
		t.Errorf("one replica, the old change's Service and the recent one's: %s %s, want DRIFT naming db", r.Status, r.Reason)
	}
}

func TestDNSRowsCountInTheRun(t *testing.T) {
	svcs := []Service{web("10.0.0.1")}
	n := node("node-a")
	good := answers(svcs, false)
	var lacking []dnsexpect.Answer
	for _, a := range good {
		if a.Name == "web.default.svc.cluster.local." && a.Type == dnsexpect.TypeA {
			a.Records = nil
		}
		lacking = append(lacking, a)
	}
	in := Input{Services: svcs, Nodes: []NodeState{healthyNode(n, programmed(svcs, n), t0)}, Now: t0, HealthTimeout: time.Minute, Domain: "cluster.local",
		DNS: []DNSReading{{Replica: "kube-system/coredns-b", Answers: good, At: t0.Add(time.Hour)},
			{Replica: "kube-system/coredns-a", Answers: lacking, At: t0.Add(time.Hour)}}}
	rep := Judge(in)
	if rep.Status != Drift || rep.DNS[0].Replica != "kube-system/coredns-a" || rep.DNS[1].Status != dnsexpect.OK {
		t.Fatalf("run %s, dns %+v", rep.Status, rep.DNS)
	}
	if !strings.HasPrefix(rep.Diagnosis, "DNS replica kube-system/coredns-a: ") || !strings.Contains(rep.Diagnosis, "10.96.0.10") || rep.Next != "kubectl logs -n kube-system coredns-a --since=1h" {
		t.Errorf("diagnosis %q next %q", rep.Diagnosis, rep.Next)
	}
	in.DNS[1] = DNSReading{Replica: "kube-system/coredns-a", Unreadable: "the DNS Pod is Pending, not Running"}
	if rep := Judge(in); rep.Status != Unknown || rep.Diagnosis != "DNS replica kube-system/coredns-a: the DNS Pod is Pending, not Running" {
		t.Errorf("an unknown replica: %s %q", rep.Status, rep.Diagnosis)
	}
}
