package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// dnsVerdict is the part of hack/dnsprobe's JSON the tests read.
type dnsVerdict struct {
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Missing []struct{ Name, Type, Data string }
	Extra   []struct{ Name, Type, Data string }
	Answers []struct {
		Name, Type string
		Records    []struct{ Name, Type, Data string }
	}
}

// startCoreDNS runs the CoreDNS of hack/build-coredns.sh (KUBECTL_SLICES_COREDNS)
// on loopback with a kubeadm Corefile whose kubernetes plugin reads the test
// API server, waits until its ready plugin says the informers synced, and
// returns its DNS address and the Corefile's path.
func startCoreDNS(t *testing.T) (addr, corefilePath string) {
	dnsCorefile := filepath.Join(t.TempDir(), "Corefile")
	t.Helper()
	dir := os.Getenv("KUBECTL_SLICES_COREDNS")
	if dir == "" {
		t.Skip("KUBECTL_SLICES_COREDNS is not set: make e2e-dns (or e2e) builds CoreDNS with hack/build-coredns.sh")
	}
	addr, ready, health := freeAddr(t), freeAddr(t), freeAddr(t)
	host, port, _ := net.SplitHostPort(addr)
	corefile := fmt.Sprintf(`.:%s {
    bind %s
    errors
    health %s
    ready %s
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       kubeconfig %s
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loadbalance
}
`, port, host, health, ready, shared.Kubeconfig)
	if err := os.WriteFile(dnsCorefile, []byte(corefile), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "coredns"), "-conf", dnsCorefile)
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("coredns:\n%s", logs)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + ready + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return addr, dnsCorefile
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("coredns not ready after a minute:\n%s", logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// dnsProbe is hack/dnsprobe, built once per test run.
func dnsProbe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(pluginDir, "dnsprobe")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	cmd := exec.Command("go", "build", "-o", bin, "./hack/dnsprobe")
	cmd.Dir = repoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build dnsprobe: %v\n%s", err, out)
	}
	return bin
}

// probe checks one replica at addr for ns/name, its pending window read
// from the replica's Corefile.
func probe(t *testing.T, addr, corefile, ns, name string) dnsVerdict {
	t.Helper()
	out, err := exec.Command(dnsProbe(t), "-kubeconfig", shared.Kubeconfig, "-n", ns, "-service", name,
		"-addr", addr, "-corefile", corefile).Output()
	if err != nil {
		t.Fatalf("dnsprobe: %v %s", err, out)
	}
	var v dnsVerdict
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("dnsprobe output: %v\n%s", err, out)
	}
	return v
}

// staleReplica answers as the replica at upstream does, but with the
// record "wrong" added to every A answer for name and "hidden" left out:
// a replica whose view of the Service is not the API's.
func staleReplica(t *testing.T, upstream, name, hidden, wrong string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	srv := &dns.Server{Listener: l, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m, _, err := c.Exchange(r, upstream)
		if err != nil {
			m = new(dns.Msg)
			m.SetRcode(r, dns.RcodeServerFailure)
			_ = w.WriteMsg(m)
			return
		}
		if q := r.Question[0]; q.Qtype == dns.TypeA && strings.EqualFold(q.Name, name) {
			var keep []dns.RR
			for _, rr := range m.Answer {
				if a, ok := rr.(*dns.A); !ok || a.A.String() != hidden {
					keep = append(keep, rr)
				}
			}
			rr, _ := dns.NewRR(name + " 30 IN A " + wrong)
			m.Answer = append(keep, rr)
		}
		_ = w.WriteMsg(m)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return l.Addr().String()
}

// A headless Service's records on a real CoreDNS: OK; an endpoint turned
// not ready is PENDING or already OK right after, then OK without it; a
// replica that serves other records is PENDING within the window and DRIFT
// after it, naming the records.
func TestDNSReplicaRecords(t *testing.T) {
	addr, corefile := startCoreDNS(t)
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "db", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }))
	a, b := podSpec("db", 0, 71), podSpec("db", 1, 71)
	a.Hostname, a.Subdomain = "db-0", "db"
	mustPods(t, shared, ns, a, b)
	slices(t, "sync", "svc/db", "-n", ns).mustCode(t, 0)
	name := "db." + ns + ".svc.cluster.local."

	v := waitVerdict(t, addr, corefile, ns, "db", "OK")
	mustHave(t, v, "A", name, "10.71.0.1", "10.71.0.2")
	mustHave(t, v, "A", "db-0."+name, "10.71.0.1")
	mustHave(t, v, "SRV", "_http._tcp."+name, "0 50 8080 db-0."+name, "0 50 8080 10-71-0-2."+name)

	// The endpoint of db-1 becomes not ready in its slice.
	sl := listSlices(t, shared, ns, "db", "")[0]
	for i := range sl.Endpoints {
		if sl.Endpoints[i].Addresses[0] == "10.71.0.2" {
			sl.Endpoints[i].Conditions.Ready = new(bool)
		}
	}
	if _, err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Update(context.Background(), &sl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	if v := probe(t, addr, corefile, ns, "db"); v.Status != "PENDING" && v.Status != "OK" {
		t.Fatalf("right after the change: %s: %s", v.Status, v.Reason)
	} else {
		t.Logf("right after the change: %s: %s", v.Status, v.Reason)
	}
	v = waitVerdict(t, addr, corefile, ns, "db", "OK")
	mustHave(t, v, "A", name, "10.71.0.1")
	mustHave(t, v, "A", "10-71-0-2."+name)

	// A replica still serving the old endpoint and missing the live one.
	stale := staleReplica(t, addr, name, "10.71.0.1", "10.71.0.2")
	if v := probe(t, stale, corefile, ns, "db"); time.Since(changed) < 4*time.Second && v.Status != "PENDING" {
		t.Errorf("stale replica right after the change: %s: %s", v.Status, v.Reason)
	} else {
		t.Logf("stale replica %s after the change: %s: %s", time.Since(changed).Round(time.Second), v.Status, v.Reason)
	}
	time.Sleep(time.Until(changed.Add(7 * time.Second)))
	v = probe(t, stale, corefile, ns, "db")
	if v.Status != "DRIFT" || !strings.Contains(v.Reason, "missing A "+name+" 10.71.0.1") ||
		!strings.Contains(v.Reason, "extra A "+name+" 10.71.0.2") {
		t.Fatalf("stale replica: %s: %s", v.Status, v.Reason)
	}
	t.Logf("stale replica after the window: %s: %s", v.Status, v.Reason)
	if v := probe(t, addr, corefile, ns, "db"); v.Status != "OK" {
		t.Fatalf("the real replica after the window: %s: %s", v.Status, v.Reason)
	}
}

// waitVerdict probes until the verdict is want, for at most 30 s.
func waitVerdict(t *testing.T, addr, corefile, ns, name, want string) dnsVerdict {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := probe(t, addr, corefile, ns, name)
		if v.Status == want {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("verdict %s, want %s: %s", v.Status, want, v.Reason)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// mustHave fails unless the answer to typ name holds exactly data.
func mustHave(t *testing.T, v dnsVerdict, typ, name string, data ...string) {
	t.Helper()
	for _, a := range v.Answers {
		if a.Type != typ || a.Name != name {
			continue
		}
		var got []string
		for _, r := range a.Records {
			got = append(got, r.Data)
		}
		if strings.Join(sortedCopy(got), ",") != strings.Join(sortedCopy(data), ",") {
			t.Fatalf("%s %s: got %v, want %v", typ, name, got, data)
		}
		return
	}
	t.Fatalf("no answer to %s %s in %+v", typ, name, v.Answers)
}

// A ClusterIP Service answers its cluster IP, its endpoints' names their
// addresses, and SRV at the service port; an ExternalName Service a CNAME:
// the expected records agree with a real CoreDNS.
func TestDNSClusterIPAndExternalName(t *testing.T) {
	addr, corefile := startCoreDNS(t)
	ns := newNamespace(t, shared)
	web := mustService(t, shared, service(ns, "web"))
	mustService(t, shared, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}})
	mustPods(t, shared, ns, podSpec("web", 0, 72), podSpec("web", 1, 72))
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	name := "web." + ns + ".svc.cluster.local."

	v := waitVerdict(t, addr, corefile, ns, "web", "OK")
	mustHave(t, v, "A", name, web.Spec.ClusterIP)
	mustHave(t, v, "A", "10-72-0-2."+name, "10.72.0.2")
	mustHave(t, v, "SRV", "_http._tcp."+name, "0 100 80 "+name)
	v = waitVerdict(t, addr, corefile, ns, "ext", "OK")
	mustHave(t, v, "CNAME", "ext."+ns+".svc.cluster.local.", "db.example.com.")
}
