package e2enode

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// verifyRulesDeleted deletes a rule by hand on each node, one after the
// other: the DNAT of web-b1's endpoint chain on the second (iptables),
// then the Service's service-ips element on the first (nftables). verify,
// right after each, says DRIFT (exit 1) naming it: the endpoint web-b1
// (the first node OK), then also the missing dispatch. Then,
// as docs/verify.md advises, both kube-proxy Pods are deleted: each new
// one's full sync puts its rules back. The nftables one also reads its
// service-ips map back when it starts (an image without /etc/protocols
// empties it then): the map holds every Service it held, verify says OK
// of the Service and of kube-dns, and the probe Pod on the first node is
// answered by every backend and resolves names through kube-dns.
func verifyRulesDeleted(t *testing.T, target []string, proxies map[string]corev1.Pod, backends []corev1.Pod) {
	svc := getService(t, target[2], "web")
	a, b := proxies[node.Name()], proxies[nodeB.Name()]
	held := serviceIPs(t, a)
	b1 := backendNamed(t, backends, "web-b1").Status.PodIP + ":8000"
	dnat := dnatRule(t, b, b1)
	restarted := false
	defer func() {
		if !restarted {
			restartKubeProxies(t, a, b) // a full sync puts the rules back
		}
	}()
	// iptables-save quotes the rule's comment as sh does: eval reads it back.
	kubectl(t, "", "exec", "-n", "kube-system", b.Name, "--", "sh", "-c", `eval "iptables -w 5 -t nat -D ${1#-A }"`, "sh", dnat).ok(t)

	rep, r := verifyJSON(t, target...)
	wantCode(t, r, 1, "a DNAT deleted by hand")
	sep := strings.Fields(dnat)[1]
	if nb := rep.node(t, nodeB.Name()); nb.Status != "DRIFT" || !slices.Equal(nb.findings("endpoint", nb.Missing), []string{b1}) || len(nb.Extra) != 0 ||
		!strings.Contains(nb.Missing[0].Detail, sep+" has no DNAT rule") {
		t.Errorf("node B %+v, want DRIFT missing %s (%s has no DNAT rule)", nb, b1, sep)
	}
	if na := rep.node(t, node.Name()); na.Status != "OK" {
		t.Errorf("node A %+v, want OK", na)
	}
	t.Logf("DNAT deleted: %s", rep.Diagnosis)

	kubectl(t, "", "exec", "-n", "kube-system", a.Name, "--", "nft", "delete", "element", "ip", "kube-proxy", "service-ips",
		fmt.Sprintf("{ %s . tcp . 80 }", svc.Spec.ClusterIP)).ok(t)
	rep, r = verifyJSON(t, target...)
	wantCode(t, r, 1, "a dispatch deleted by hand")
	if na := rep.node(t, node.Name()); na.Status != "DRIFT" || len(na.Missing) != 1 || na.Missing[0].What != "dispatch" {
		t.Errorf("node A %+v, want DRIFT missing the dispatch", na)
	}

	restarted = true
	start := time.Now()
	a = restartKubeProxies(t, a, b)[node.Name()]
	t.Logf("both kube-proxy Pods replaced and Ready in %s", time.Since(start).Round(time.Millisecond))
	// Ready is kube-proxy's /healthz, which a kube-proxy that has not yet
	// synced passes: its first sync follows within seconds.
	eventually(t, 15*time.Second, "the restarted nftables kube-proxy's service-ips map holding every Service again", func() error {
		if lost := lostServices(t, held, serviceIPs(t, a), target[2], "default", "kube-system"); len(lost) > 0 {
			return fmt.Errorf("it lacks %d of %d: %v", len(lost), len(held), lost)
		}
		return nil
	})
	verifyUntil(t, 10*time.Second, 0, target...)
	verifyUntil(t, 10*time.Second, 0, "svc/kube-dns", "-n", "kube-system")
	probe := runningPods(t, target[2], "app=probe", 1, true)[0]
	waitAnswers(t, probe, "http://"+svc.Spec.ClusterIP+"/hostname", map[string]bool{"web-a1": true, "web-b1": true, "web-b2": true})
	waitResolves(t, probe, "kubernetes.default.svc.cluster.local", map[string]bool{getService(t, "default", "kubernetes").Spec.ClusterIP: true})
}

// restartKubeProxies deletes the kube-proxy Pods (waiting until they are
// gone) and returns their DaemonSets' new ones, Ready, by node.
func restartKubeProxies(t testing.TB, pods ...corev1.Pod) map[string]corev1.Pod {
	t.Helper()
	args := []string{"delete", "pod", "-n", "kube-system"}
	for _, p := range pods {
		args = append(args, p.Name)
	}
	kubectl(t, "", args...).ok(t)
	fresh := kubeProxyPods(t)
	for _, p := range pods {
		if fresh[p.Spec.NodeName].Name == p.Name {
			t.Fatalf("kube-proxy Pod %s not replaced", p.Name)
		}
	}
	return fresh
}

// serviceIPKey is an element of kube-proxy's service-ips map as nft lists
// it: "IP . PROTOCOL . PORT" (a protocol by name, or by number where nft
// finds no /etc/protocols).
var serviceIPKey = regexp.MustCompile(`(\d+\.\d+\.\d+\.\d+) \. (\w+) \. (\d+) : goto`)

// serviceIPs are the keys of the nftables kube-proxy's service-ips map.
func serviceIPs(t *testing.T, proxy corev1.Pod) map[string]bool {
	t.Helper()
	out := kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "nft", "list", "map", "ip", "kube-proxy", "service-ips").ok(t)
	keys := map[string]bool{}
	for _, m := range serviceIPKey.FindAllStringSubmatch(out, -1) {
		keys[m[1]+" . "+m[2]+" . "+m[3]] = true
	}
	return keys
}

// lostServices are the keys held before and not after whose cluster IP a
// Service of one of the namespaces still has: this test's and the
// cluster's own (another test's namespace may be going away, its slices
// before its Services, and a Service left without endpoints leaves the
// map rightly).
func lostServices(t *testing.T, before, after map[string]bool, namespaces ...string) []string {
	t.Helper()
	live := map[string]bool{}
	for _, ns := range namespaces {
		list, err := cluster.Admin.CoreV1().Services(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Items {
			live[s.Spec.ClusterIP] = true
		}
	}
	var lost []string
	for k := range before {
		if !after[k] && live[strings.Fields(k)[0]] {
			lost = append(lost, k)
		}
	}
	slices.Sort(lost)
	return lost
}

// dnatRule is the rule of the iptables kube-proxy's nat table that DNATs
// to ep ("IP:port"), as iptables-save prints it.
func dnatRule(t testing.TB, proxy corev1.Pod, ep string) string {
	t.Helper()
	r, err := endpointDNAT(t, proxy, ep, func(to string) bool { return to == ep })
	if err != nil {
		t.Fatal(err)
	}
	return r.line
}

// dnat is a KUBE-SEP chain's DNAT rule: the chain, its destination
// ("IP:port") and the line as iptables-save prints it.
type dnat struct{ chain, to, line string }

// endpointDNAT is the first DNAT rule of an endpoint chain in the node's
// nat table, read through kubectl exec into its kube-proxy Pod (iptables
// mode), whose destination is one match wants (what, in the error).
func endpointDNAT(t testing.TB, proxy corev1.Pod, what string, match func(to string) bool) (dnat, error) {
	t.Helper()
	out := kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "iptables-save", "-t", "nat").ok(t)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "-A" && strings.HasPrefix(f[1], "KUBE-SEP-") && f[len(f)-2] == "--to-destination" && match(f[len(f)-1]) {
			return dnat{chain: f[1], to: f[len(f)-1], line: l}, nil
		}
	}
	return dnat{}, fmt.Errorf("no endpoint chain's rule on %s DNATs to %s:\n%s", proxy.Spec.NodeName, what, out)
}

func getService(t testing.TB, ns, name string) *corev1.Service {
	t.Helper()
	svc, err := cluster.Admin.CoreV1().Services(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
