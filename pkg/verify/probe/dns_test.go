package probe

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// dnsTransport forwards each DNS Pod to its own loopback server; a Pod
// without one cannot be forwarded.
type dnsTransport struct {
	fakeTransport
	servers map[string]string // Pod name -> address
}

func (d dnsTransport) ForwardDial(ctx context.Context, ns, pod string, port int) (dnsread.Dial, func(), error) {
	addr, ok := d.servers[pod]
	if !ok || port != 53 {
		return d.fakeTransport.ForwardDial(ctx, ns, pod, port)
	}
	return func(ctx context.Context) (net.Conn, error) {
		var nd net.Dialer
		return nd.DialContext(ctx, "tcp", addr)
	}, func() {}, nil
}

// answering serves A records of name from ips, and each address's
// endpoint name (10-0-0-1.name), on loopback TCP.
func answering(t *testing.T, name string, ips ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: l, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		for _, ip := range ips {
			host := strings.ReplaceAll(ip, ".", "-") + "." + name
			if q.Qtype == dns.TypeA && (strings.EqualFold(q.Name, name) || strings.EqualFold(q.Name, host)) {
				rr, _ := dns.NewRR(q.Name + " 30 IN A " + ip)
				m.Answer = append(m.Answer, rr)
			}
		}
		if len(m.Answer) == 0 {
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return l.Addr().String()
}

func dnsPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ProxyNamespace, Name: name, Labels: map[string]string{"k8s-app": "kube-dns"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.9"}}
}

// headlessDB is a headless Service whose one slice, changed an hour ago,
// holds a ready 10.0.0.1 and a not-ready 10.0.0.2.
func headlessDB() verdict.Service {
	old := metav1.NewTime(time.Now().Add(-time.Hour))
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", CreationTimestamp: old},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "db"}}}
	yes, no := true, false
	sl := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-1", CreationTimestamp: old,
		Labels: map[string]string{discoveryv1.LabelServiceName: "db"}}, AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: &yes}},
			{Addresses: []string{"10.0.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: &no}}}}
	return verdict.Service{Service: svc, Slices: []*discoveryv1.EndpointSlice{sl}}
}

// dnsRows reads the replicas with the rights the caller has and judges
// what they answered.
func dnsRows(o Options, svcs []verdict.Service) ([]verdict.DNSReading, dnsexpect.Timing, []verdict.DNSRow) {
	ctx := context.Background()
	readings, timing := readDNS(ctx, o, preflight(ctx, o.Client, ProxyNamespace), "cluster.local", svcs)
	rep := verdict.Judge(verdict.Input{Services: svcs, DNS: readings, DNSTiming: timing, Domain: "cluster.local"})
	return readings, timing, rep.DNS
}

func TestDNSReadingPerReplica(t *testing.T) {
	const name = "db.ns.svc.cluster.local."
	good := answering(t, name, "10.0.0.1")
	stale := answering(t, name, "10.0.0.1", "10.0.0.2")
	c := client(nil, dnsPod("coredns-b"), dnsPod("coredns-a"), dnsPod("coredns-c"))
	o := options(c, dnsTransport{servers: map[string]string{"coredns-a": good, "coredns-b": stale}})
	readings, _, rows := dnsRows(o, []verdict.Service{headlessDB()})
	got := map[string]verdict.DNSReading{}
	for _, r := range readings {
		got[r.Replica] = r
	}
	if a := got["kube-system/coredns-a"]; a.Unreadable != "" || a.Address != "10.244.0.9" || len(a.Answers) == 0 || a.At.IsZero() {
		t.Errorf("replica a answers: %+v", a)
	}
	if c := got["kube-system/coredns-c"]; !strings.Contains(c.Unreadable, "port-forward") || c.Answers != nil {
		t.Errorf("replica c cannot be forwarded to: %+v", c)
	}
	// What was asked is what the judge holds the answers against.
	var order []string
	for _, r := range rows {
		order = append(order, string(r.Status))
	}
	if strings.Join(order, ",") != "OK,DRIFT,UNKNOWN" {
		t.Errorf("replicas a, b, c judged %v, want OK, DRIFT (b still answers the not-ready address), UNKNOWN", order)
	}
}

func TestDNSNeedsPortForward(t *testing.T) {
	c := client(map[string]bool{"create pods/portforward": true}, dnsPod("coredns-a"))
	readings, _, _ := dnsRows(options(c, dnsTransport{}), []verdict.Service{headlessDB()})
	if len(readings) != 1 || readings[0].Unreadable != "forbidden: needs create pods/portforward in kube-system" || readings[0].Address != "10.244.0.9" {
		t.Fatalf("without port-forward, the replica is not asked and the right is named: %+v", readings)
	}
}

func TestDNSCorefileSetsTheWindow(t *testing.T) {
	// kubeadm's Corefile keeps the cluster domain out of the cache: a
	// difference 20 s after the change is drift, not pending.
	const corefile = `.:53 {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       ttl 30
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
}`
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ProxyNamespace, Name: DNSConfigMap}, Data: map[string]string{"Corefile": corefile}}
	svc := headlessDB()
	recent := metav1.NewTime(time.Now().Add(-20 * time.Second))
	svc.Slices[0].CreationTimestamp = recent
	for _, tc := range []struct {
		objs   []runtime.Object
		window time.Duration
		want   dnsexpect.Status
	}{
		{[]runtime.Object{dnsPod("coredns-a")}, 35 * time.Second, dnsexpect.Pending}, // no Corefile: the cache assumed on
		{[]runtime.Object{dnsPod("coredns-a"), cm}, 5 * time.Second, dnsexpect.Drift},
	} {
		stale := answering(t, "db.ns.svc.cluster.local.", "10.0.0.1", "10.0.0.2")
		_, timing, rows := dnsRows(options(client(nil, tc.objs...), dnsTransport{servers: map[string]string{"coredns-a": stale}}), []verdict.Service{svc})
		if timing.Window() != tc.window || len(rows) != 1 || rows[0].Status != tc.want {
			t.Errorf("with %d objects: window %s, %+v; want %s, %s", len(tc.objs), timing.Window(), rows, tc.window, tc.want)
		}
	}
}
