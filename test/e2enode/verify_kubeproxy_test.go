package e2enode

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestVerifyKubeProxy runs `kubectl slices verify` against the two real
// nodes' kube-proxy (nftables on the first, iptables on the second), in
// steps that each restore what they break: agreement, rules deleted by
// hand on both nodes and both kube-proxies restarted to put them back
// (verify_restart_test.go), topology hints, both CoreDNS replicas (a headless Service's
// change, a cached answer PENDING), the health check node port as a user
// without exec, least privilege, a stopped kube-proxy, a stopped kubelet.
func TestVerifyKubeProxy(t *testing.T) {
	requireNode(t)
	proxies := kubeProxyPods(t)
	requireCoreDNS(t)
	coreDNSPods(t)
	ns := newNamespace(t, nil)
	web := func(name, zone string) string { return workloadPodIn(name, map[string]string{"app": "web"}, zone) }
	// probe-a, a client on the first node, started with the backends.
	manifests := []string{webService, web("web-a1", zoneA), web("web-b1", zoneB), web("web-b2", zoneB),
		workloadPodIn("probe-a", map[string]string{"app": "probe"}, zoneA)}
	kubectl(t, strings.Join(manifests, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
	backends := runningPods(t, ns, "app=web", 3, true)
	syncSlices(t, ns, backends)
	target := []string{"svc/web", "-n", ns}

	t.Run("Healthy", func(t *testing.T) { verifyHealthy(t, target, backends) })
	t.Run("RulesDeletedThenProxiesRestarted", func(t *testing.T) { verifyRulesDeleted(t, target, proxies, backends) })
	t.Run("TopologyPreferClose", func(t *testing.T) { verifyTopology(t, ns) })
	t.Run("DNSHeadlessAndPending", func(t *testing.T) { verifyDNS(t, ns) })
	t.Run("HealthCheckAndLeastPrivilege", func(t *testing.T) { verifyLeastPrivilege(t, ns) })
	t.Run("StoppedKubeProxy", func(t *testing.T) { verifyStoppedProxy(t, target, ns, backends) })
	t.Run("StoppedKubelet", func(t *testing.T) { verifyStoppedKubelet(t, target) })
}

// verifyHealthy: both nodes agree with the slices, in their own mode,
// each with a last sync; exit 0.
func verifyHealthy(t *testing.T, target []string, backends []corev1.Pod) {
	rep := verifyUntil(t, 30*time.Second, 0, target...)
	want := map[string]string{node.Name(): "nftables", nodeB.Name(): "iptables"}
	var ips []string
	for _, p := range backends {
		ips = append(ips, p.Status.PodIP+":8000")
	}
	slices.Sort(ips)
	for name, mode := range want {
		n := rep.node(t, name)
		if n.Status != "OK" || n.Mode != mode || n.Proxy != "kube-proxy" || n.LastSync == nil || n.Expected != 3 || n.Programmed != 3 {
			t.Errorf("node %s: %+v, want OK in %s mode with a last sync", name, n, mode)
		}
		if got := n.endpoints(target[2] + "/web"); !slices.Equal(got, ips) {
			t.Errorf("node %s programs %v, want %v", name, got, ips)
		}
	}
	if len(rep.DNS) != 2 || rep.DNS[0].Status != "OK" || rep.DNS[1].Status != "OK" {
		t.Errorf("DNS replicas %+v, want two OK", rep.DNS)
	}
	table := kubectl(t, "", append([]string{"slices", "verify"}, target...)...).ok(t)
	for _, w := range []string{"kube-proxy/nftables", "kube-proxy/iptables"} {
		if !strings.Contains(table, w) {
			t.Errorf("the table lacks %q:\n%s", w, table)
		}
	}
}

// preferClose is a Service whose traffic prefers its own zone's
// endpoints.
const preferClose = `apiVersion: v1
kind: Service
metadata: {name: near}
spec:
  selector: {app: near}
  trafficDistribution: PreferClose
  ports: [{name: http, port: 80, targetPort: http}]
`

// verifyTopology: PreferClose with a backend in each zone: sync writes
// zone hints, each node programs only its zone's backend, verify agrees,
// and a client on each node reaches exactly that backend.
func verifyTopology(t *testing.T, ns string) {
	near := func(name, zone string) string { return workloadPodIn(name, map[string]string{"app": "near"}, zone) }
	client := func(name, zone string) string { return workloadPodIn(name, map[string]string{"app": "client"}, zone) }
	kubectl(t, strings.Join([]string{preferClose, near("near-a", zoneA), near("near-b", zoneB), client("client-a", zoneA), client("client-b", zoneB)}, "---\n"),
		"apply", "-n", ns, "-f", "-").ok(t)
	pods := runningPods(t, ns, "app=near", 2, true)
	clients := runningPods(t, ns, "app=client", 2, true)
	kubectl(t, "", "slices", "sync", "svc/near", "-n", ns).ok(t)
	hints := map[string]string{}
	list, err := cluster.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=near"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Hints != nil && len(e.Hints.ForZones) == 1 {
				hints[e.Addresses[0]] = e.Hints.ForZones[0].Name
			}
		}
	}
	byZone := map[string]corev1.Pod{}
	for _, p := range pods {
		zone := zoneA
		if p.Spec.NodeName == nodeB.Name() {
			zone = zoneB
		}
		byZone[zone] = p
		if hints[p.Status.PodIP] != zone {
			t.Errorf("the slices hint %s (%s) for %q, want %s", p.Name, p.Status.PodIP, hints[p.Status.PodIP], zone)
		}
	}
	rep := verifyUntil(t, 30*time.Second, 0, "svc/near", "-n", ns)
	for zone, name := range map[string]string{zoneA: node.Name(), zoneB: nodeB.Name()} {
		n := rep.node(t, name)
		want := []string{byZone[zone].Status.PodIP + ":8000"}
		if got := n.endpoints(ns + "/near"); !slices.Equal(got, want) || n.Expected != 1 || n.Status != "OK" {
			t.Errorf("node %s programs %v (expected %d, %s), want %v", name, got, n.Expected, n.Status, want)
		}
	}
	svc, err := cluster.Admin.CoreV1().Services(ns).Get(context.Background(), "near", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		zone := zoneA
		if c.Spec.NodeName == nodeB.Name() {
			zone = zoneB
		}
		waitAnswers(t, c, "http://"+svc.Spec.ClusterIP+"/hostname", map[string]bool{byZone[zone].Name: true})
	}
}

// verifyReadRBAC and verifyFullRBAC are verify's RBAC exactly as
// docs/verify.md gives it: the read-only ClusterRole and Role, and the
// Role of everything (create only: on 1.35+ the websocket upgrade also
// needs get, so it is refused and verify falls back to SPDY).
const verifyReadRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubectl-slices-verify-read
rules:
- apiGroups: [""]
  resources: ["services", "pods", "nodes", "endpoints"]
  verbs: ["get", "list"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kubectl-slices-verify-read
  namespace: kube-system
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list"]
- apiGroups: [""]
  resources: ["pods/proxy"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["configmaps"]
  resourceNames: ["coredns"]
  verbs: ["get"]
`

const verifyFullRBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: kubectl-slices-verify-full
  namespace: kube-system
rules:
- apiGroups: [""]
  resources: ["pods/portforward", "pods/exec"]
  verbs: ["create"]
`

// verifyBindings binds the role (a ClusterRole when cluster, else a Role
// of kube-system) to the ServiceAccount sa of ns.
func verifyBindings(role, sa, ns string, cluster bool) string {
	if cluster {
		return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s}
subjects: [{kind: ServiceAccount, name: %[2]s, namespace: %[3]s}]
`, role, sa, ns)
	}
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: %[1]s, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: %[1]s}
subjects: [{kind: ServiceAccount, name: %[2]s, namespace: %[3]s}]
`, role, sa, ns)
}

// localLB is a LoadBalancer Service (no cloud: its address stays pending)
// with externalTrafficPolicy Local, so a health check node port.
const localLB = `apiVersion: v1
kind: Service
metadata: {name: lb}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector: {app: lb}
  ports: [{name: http, port: 80, targetPort: http}]
`

// verifyLeastPrivilege: as a ServiceAccount with the documented read-only
// RBAC (no exec, no port-forward), the health check node port of an
// externalTrafficPolicy Local Service agrees on both nodes (one local
// endpoint on the first, none on the second), the other tiers are UNKNOWN
// with the right they lack, exit 6; with the documented Role of
// everything added, every tier answers and verify exits 0.
func verifyLeastPrivilege(t *testing.T, ns string) {
	kubectl(t, localLB+"---\n"+workloadPodIn("lb-a", map[string]string{"app": "lb"}, zoneA), "apply", "-n", ns, "-f", "-").ok(t)
	runningPods(t, ns, "app=lb", 1, true)
	kubectl(t, "", "slices", "sync", "svc/lb", "-n", ns).ok(t)
	kubeconfig := tokenKubeconfig(t, ns, "verifier")
	kubectl(t, verifyReadRBAC+"---\n"+verifyBindings("kubectl-slices-verify-read", "verifier", ns, true)+"---\n"+
		verifyBindings("kubectl-slices-verify-read", "verifier", ns, false), "apply", "-f", "-").ok(t)
	t.Cleanup(func() {
		kubectl(t, "", "delete", "clusterrole,clusterrolebinding", "kubectl-slices-verify-read", "--ignore-not-found")
		kubectl(t, "", "delete", "-n", "kube-system", "role,rolebinding", "kubectl-slices-verify-read", "kubectl-slices-verify-full", "--ignore-not-found")
	})
	args := []string{"svc/lb", "-n", ns, "--kubeconfig", kubeconfig}
	// kube-proxy opens the health check node port, and counts the local
	// endpoints, at its sync after the Service's and the slices': until
	// then the port refuses or answers an older count.
	hc := "health-check " + ns + "/lb"
	rep := verifyUntil(t, 10*time.Second, 6, args...)
	eventually(t, 10*time.Second, "health check node ports answer and agree", func() error {
		rep = verifyUntil(t, 10*time.Second, 6, args...)
		for _, n := range rep.Nodes {
			if why := n.tiers()[hc]; why != "ok" {
				return fmt.Errorf("node %s: %s", n.Node, why)
			}
			if len(n.Missing)+len(n.Extra) > 0 {
				return fmt.Errorf("node %s: missing %+v, extra %+v", n.Node, n.Missing, n.Extra)
			}
		}
		return nil
	})
	for _, name := range []string{node.Name(), nodeB.Name()} {
		n := rep.node(t, name)
		tiers := n.tiers()
		if tiers["healthz"] != "ok" || tiers[hc] != "ok" || tiers["metrics"] != "forbidden: needs create pods/portforward in kube-system" ||
			tiers["rules"] != "forbidden: needs create pods/exec in kube-system" {
			t.Errorf("node %s tiers %v", name, tiers)
		}
		if n.findings("health-check", n.Missing) != nil || n.findings("health-check", n.Extra) != nil || n.Status != "UNKNOWN" ||
			n.Reason != "forbidden: needs create pods/exec in kube-system" {
			t.Errorf("node %s: %+v", name, n)
		}
	}
	if rep.Next != "kubectl auth can-i create pods/exec -n kube-system" {
		t.Errorf("next %q", rep.Next)
	}
	kubectl(t, verifyFullRBAC+"---\n"+verifyBindings("kubectl-slices-verify-full", "verifier", ns, false), "apply", "-f", "-").ok(t)
	rep = verifyUntil(t, 10*time.Second, 0, args...)
	for _, name := range []string{node.Name(), nodeB.Name()} {
		for tier, why := range rep.node(t, name).tiers() {
			if why != "ok" {
				t.Errorf("node %s tier %s: %s", name, tier, why)
			}
		}
	}
}

// verifyStoppedProxy: the second node's kube-proxy stopped (SIGSTOP), a
// backend turns not ready: that node still sends to it (DRIFT naming the
// extra endpoint, its rules read though its HTTP ports hang), the first
// node, once it has programmed the change, agrees; continued (SIGCONT), both agree again.
func verifyStoppedProxy(t *testing.T, target []string, ns string, backends []corev1.Pod) {
	cont := stopProcess(t, processOf(t, "kube-proxy", "--hostname-override="+nodeB.Name()))
	gone := backendNamed(t, backends, "web-b2")
	makeNotReady(t, gone)
	syncSlices(t, ns, backends, "web-b2")
	// Node A's kube-proxy is running: it programs the change within its own
	// sync period. Wait for that, reading node A alone, so the run below
	// finds it settled and B's stale rules are the only finding.
	verifyUntil(t, 30*time.Second, 0, append(slices.Clone(target), "--node", node.Name())...)
	start := time.Now()
	rep, r := verifyJSON(t, append(target, "--node-timeout", "8s")...)
	took := time.Since(start)
	cont()
	wantCode(t, r, 1, "a stopped kube-proxy")
	b, a := rep.node(t, nodeB.Name()), rep.node(t, node.Name())
	if extra := b.findings("endpoint", b.Extra); b.Status != "DRIFT" || !slices.Equal(extra, []string{gone.Status.PodIP + ":8000"}) {
		t.Errorf("node B: %+v, want DRIFT with the extra endpoint %s", b, gone.Status.PodIP)
	}
	if a.Status != "OK" {
		t.Errorf("node A: %+v", a)
	}
	t.Logf("verify with node B's kube-proxy stopped took %s: %s", took.Round(time.Millisecond), rep.Diagnosis)
	verifyUntil(t, 30*time.Second, 0, target...)
}

// verifyStoppedKubelet: the second node's kubelet stopped (SIGSTOP): its
// exec and port-forward hang; verify says UNKNOWN for it within the node
// timeout and verifies the first node.
func verifyStoppedKubelet(t *testing.T, target []string) {
	dir := strings.TrimSuffix(nodeB.KubeletLog(), "/kubelet.log")
	cont := stopProcess(t, processOf(t, "kubelet", dir+"/kubelet.yaml"))
	const timeout = 4 * time.Second
	start := time.Now()
	rep, r := verifyJSON(t, append(target, "--node-timeout", timeout.String())...)
	took := time.Since(start)
	cont()
	wantCode(t, r, 6, "a stopped kubelet")
	b, a := rep.node(t, nodeB.Name()), rep.node(t, node.Name())
	if b.Status != "UNKNOWN" || !strings.Contains(b.Reason, "no answer within") && !strings.Contains(b.Reason, "timeout") {
		t.Errorf("node B: %+v", b)
	}
	if a.Status != "OK" {
		t.Errorf("node A: %+v", a)
	}
	if took > timeout+3*time.Second {
		t.Errorf("verify took %s with a node timeout of %s", took, timeout)
	}
	t.Logf("verify with node B's kubelet stopped took %s (node timeout %s): %s", took.Round(time.Millisecond), timeout, b.Reason)
}

// headlessDB is a headless Service: CoreDNS answers its name with its
// ready endpoints' addresses; no proxy programs it.
const headlessDB = `apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: http, port: 80, targetPort: http}]
`

// verifyDNS: a headless Service's change (a backend made not ready) is
// seen by both CoreDNS replicas (OK); then, with the Corefile caching the
// cluster domain (kubeadm's without its "disable" lines, the replicas
// restarted to load it), an answer cached before a change is served
// after it: PENDING (within the cache's window), exit 6. kubeadm's
// Corefile is put back after.
func verifyDNS(t *testing.T, ns string) {
	db := func(name, zone string) string { return workloadPodIn(name, map[string]string{"app": "db"}, zone) }
	kubectl(t, strings.Join([]string{headlessDB, db("db-a", zoneA), db("db-b", zoneB)}, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
	pods := runningPods(t, ns, "app=db", 2, true)
	kubectl(t, "", "slices", "sync", "svc/db", "-n", ns).ok(t)
	target := []string{"svc/db", "-n", ns}
	dnsAll := func(rep verifyReport, status string) error {
		if len(rep.DNS) != 2 {
			return fmt.Errorf("%d DNS rows", len(rep.DNS))
		}
		for _, d := range rep.DNS {
			if d.Status != status {
				return fmt.Errorf("replica %s: %s (%s), want %s", d.Replica, d.Status, d.Reason, status)
			}
		}
		return nil
	}
	if err := dnsAll(verifyUntil(t, 15*time.Second, 0, target...), "OK"); err != nil {
		t.Fatal(err)
	}
	dbB := backendNamed(t, pods, "db-b")
	makeNotReady(t, dbB)
	kubectl(t, "", "slices", "sync", "svc/db", "-n", ns).ok(t)
	if err := dnsAll(verifyUntil(t, 15*time.Second, 0, target...), "OK"); err != nil {
		t.Fatalf("after db-b turned not ready: %v", err)
	}

	setCorefile(t, strings.Replace(coreDNSCorefile, "cache 30 {\n       disable success cluster.local\n       disable denial cluster.local\n    }", "cache 30", 1))
	defer setCorefile(t, coreDNSCorefile)
	// Both replicas answer (and cache) db without db-b; db-b turns ready
	// and is published; the replicas still serve the cached answer.
	if err := dnsAll(verifyUntil(t, 15*time.Second, 0, target...), "OK"); err != nil {
		t.Fatal(err)
	}
	if code, body, err := httpDo("POST", fmt.Sprintf("http://%s:8000/ready/on", dbB.Status.PodIP)); err != nil || code != 200 {
		t.Fatalf("POST /ready/on: %d %q %v", code, body, err)
	}
	eventually(t, 30*time.Second, "db-b ready", func() error {
		p, err := cluster.Admin.CoreV1().Pods(ns).Get(context.Background(), "db-b", metav1.GetOptions{})
		if err != nil || !podReady(p) {
			return fmt.Errorf("not ready (%v)", err)
		}
		return nil
	})
	kubectl(t, "", "slices", "sync", "svc/db", "-n", ns).ok(t)
	// Past the informers' 5 s slack, within the cache's 30 s: only the
	// cache makes the older answer pending.
	time.Sleep(6 * time.Second)
	rep, r := verifyJSON(t, target...)
	wantCode(t, r, 6, "a cached answer")
	if err := dnsAll(rep, "PENDING"); err != nil {
		t.Errorf("a cached answer within the cache's window: %v", err)
	}
	t.Logf("cached: %s", rep.Diagnosis)
}

// setCorefile writes the Corefile into the coredns ConfigMap and restarts
// the replicas, which read it when they start: scaled to none, then back
// to two in one go, so that the scheduler spreads them over the nodes
// (replacements made while the old replicas terminate would count those).
func setCorefile(t *testing.T, corefile string) {
	t.Helper()
	ctx := context.Background()
	cm, err := cluster.Admin.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["Corefile"] = corefile
	if _, err := cluster.Admin.CoreV1().ConfigMaps("kube-system").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "", "scale", "deployment/coredns", "-n", "kube-system", "--replicas=0").ok(t)
	eventually(t, 60*time.Second, "no CoreDNS Pod", func() error {
		pods, err := cluster.Admin.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: coreDNSLabel})
		if err != nil || len(pods.Items) > 0 {
			return fmt.Errorf("pods left (%v)", err)
		}
		return nil
	})
	kubectl(t, "", "scale", "deployment/coredns", "-n", "kube-system", fmt.Sprintf("--replicas=%d", coreDNSReplicas)).ok(t)
	coreDNSPods(t)
}
