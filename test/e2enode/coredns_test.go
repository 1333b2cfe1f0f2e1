package e2enode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// deployCoreDNS applies CoreDNS's manifests with kubectl when its image
// was built (coreDNSEnv set outside); it does not wait for the replicas.
func deployCoreDNS(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(artifacts, "coredns.tar")); err != nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, cluster.Kubectl(), "apply", "-f", "-")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	cmd.Stdin = strings.NewReader(coreDNSManifests())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply coredns: %v: %s", err, out)
	}
	return nil
}

// requireCoreDNS skips the test unless CoreDNS's image was built.
func requireCoreDNS(t *testing.T) {
	t.Helper()
	requireNode(t)
	if os.Getenv(coreDNSEnv) == "" {
		t.Skip(coreDNSEnv + " is not set: make e2e-node passes hack/build-coredns.sh's folder")
	}
}

// coreDNSPods waits until CoreDNS's replicas are Ready, one on each node,
// writes the kube-dns Service's slices with kubectl slices sync (no
// EndpointSlice controller runs here) and waits until they publish the
// replicas ready; it returns the replicas by node.
func coreDNSPods(t *testing.T) map[string]corev1.Pod {
	t.Helper()
	pods := runningPods(t, "kube-system", coreDNSLabel, coreDNSReplicas, true)
	byNode := map[string]corev1.Pod{}
	want := map[string]bool{}
	for _, p := range pods {
		byNode[p.Spec.NodeName] = p
		want[p.Status.PodIP] = true
	}
	if _, a := byNode[node.Name()]; !a || len(byNode) != 2 {
		t.Fatalf("CoreDNS replicas on %v, want one on each of %s and %s", keys(nodesOf(pods)), node.Name(), nodeB.Name())
	}
	kubectl(t, "", "slices", "sync", "svc/kube-dns", "-n", "kube-system").ok(t)
	waitSlice(t, "kube-system", "kube-dns", want)
	return byNode
}

func nodesOf(pods []corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		out[p.Name+"@"+p.Spec.NodeName] = true
	}
	return out
}

// TestCoreDNSAnswersOnBothNodes: CoreDNS as kubeadm deploys it, two
// replicas, one on each node, serves a headless Service whose slices
// kubectl-slices writes. A client Pod on each node resolves the Service's
// short name with Go's resolver through the resolv.conf the kubelet wrote
// (the kube-dns ClusterIP, through kube-proxy, to either replica) to the
// ready backends' addresses; each replica, reached by kubectl port-forward
// to its TCP port 53, answers every question pkg/verify/dnsexpect derives (the
// verdict of hack/dnsprobe, pkg/verify/dnsread's Check: OK). A backend made not
// ready and the slices synced, the clients resolve the one left and each
// replica's verdict is OK again, never DRIFT on the way.
func TestCoreDNSAnswersOnBothNodes(t *testing.T) {
	requireCoreDNS(t)
	replicas := coreDNSPods(t)
	ns := newNamespace(t, nil)
	manifests := []string{dbService,
		workloadPodIn("db-a", map[string]string{"app": "db"}, zoneA), workloadPodIn("db-b", map[string]string{"app": "db"}, zoneB),
		workloadPodIn("client-a", map[string]string{"app": "client"}, zoneA), workloadPodIn("client-b", map[string]string{"app": "client"}, zoneB)}
	kubectl(t, strings.Join(manifests, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
	backends := runningPods(t, ns, "app=db", 2, true)
	clients := runningPods(t, ns, "app=client", 2, true)
	if nodes := nodesOf(append(append([]corev1.Pod(nil), backends...), clients...)); len(nodes) != 4 {
		t.Fatalf("pods: %v", keys(nodes))
	}
	syncService(t, ns, "db", backends)
	corefile := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(corefile, []byte(coreDNSCorefile), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{}
	for n, p := range replicas {
		addrs[n] = portForward(t, p, 53)
	}
	all := map[string]bool{backends[0].Status.PodIP: true, backends[1].Status.PodIP: true}
	for _, c := range clients {
		waitResolves(t, c, "db", all)
	}
	for n, addr := range addrs {
		waitVerdict(t, n, addr, corefile, ns, "db")
	}

	gone := backendNamed(t, backends, "db-b")
	makeNotReady(t, gone)
	syncService(t, ns, "db", backends, "db-b")
	left := map[string]bool{backendNamed(t, backends, "db-a").Status.PodIP: true}
	for _, c := range clients {
		waitResolves(t, c, "db", left)
	}
	for n, addr := range addrs {
		waitVerdict(t, n, addr, corefile, ns, "db")
	}
}

// dbService is a headless Service of the workload's Pods labelled app=db.
const dbService = `apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: http, port: 80, targetPort: http}]
`

// syncService writes the Service's slices with kubectl slices sync and
// waits until they publish the backends, those in notReady not ready.
func syncService(t *testing.T, ns, svc string, backends []corev1.Pod, notReady ...string) {
	t.Helper()
	kubectl(t, "", "slices", "sync", "svc/"+svc, "-n", ns).ok(t)
	want := map[string]bool{}
	for _, p := range backends {
		want[p.Status.PodIP] = !contains(notReady, p.Name)
	}
	waitSlice(t, ns, svc, want)
}

// waitResolves waits until the client Pod resolves name (the workload's
// /resolve) to exactly the addresses in want.
func waitResolves(t *testing.T, client corev1.Pod, name string, want map[string]bool) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s resolved from %s to %v", name, client.Name, keys(want)), func() error {
		code, body, err := httpGet(fmt.Sprintf("http://%s:8000/resolve?name=%s", client.Status.PodIP, name))
		if err != nil || code != 200 {
			return fmt.Errorf("resolve through %s: %d %v %s", client.Name, code, err, body)
		}
		got := map[string]bool{}
		for _, a := range strings.Fields(body) {
			got[a] = true
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("resolved to %v", keys(got))
		}
		return nil
	})
}

// forwarding is kubectl port-forward's line naming the local port.
var forwarding = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) ->`)

// portForward runs kubectl port-forward to the Pod's port on a free local
// port until the test ends, and returns the local address.
func portForward(t *testing.T, pod corev1.Pod, port int) string {
	t.Helper()
	cmd := exec.Command(cluster.Kubectl(), "port-forward", "-n", pod.Namespace, "--address", "127.0.0.1", "pod/"+pod.Name, fmt.Sprintf(":%d", port))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if m := forwarding.FindStringSubmatch(s.Text()); m != nil {
				lines <- "127.0.0.1:" + m[1]
			}
		}
		close(lines)
	}()
	select {
	case addr, ok := <-lines:
		if ok {
			return addr
		}
	case <-time.After(30 * time.Second):
	}
	t.Fatalf("kubectl port-forward to %s: no local port: %s", pod.Name, stderr.String())
	return ""
}

// dnsVerdict is the part of hack/dnsprobe's JSON (pkg/verify/dnsexpect's Result)
// the test reads.
type dnsVerdict struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// waitVerdict waits until the replica at addr (a port-forward to the
// replica on node) says OK for ns/svc, its pending window read from the
// Corefile; a DRIFT fails at once.
func waitVerdict(t *testing.T, node, addr, corefile, ns, svc string) {
	t.Helper()
	eventually(t, 45*time.Second, fmt.Sprintf("the replica on %s OK for %s/%s", node, ns, svc), func() error {
		out, err := exec.Command(filepath.Join(artifacts, "dnsprobe"), "-kubeconfig", cluster.Kubeconfig, "-n", ns, "-service", svc,
			"-addr", addr, "-corefile", corefile, "-timeout", "10s").Output()
		if err != nil {
			return fmt.Errorf("dnsprobe: %v %s", err, out)
		}
		var v dnsVerdict
		if err := json.Unmarshal(out, &v); err != nil {
			return fmt.Errorf("dnsprobe output: %v\n%s", err, out)
		}
		switch v.Status {
		case "OK":
			return nil
		case "DRIFT":
			t.Fatalf("the replica on %s for %s/%s: DRIFT: %s\n%s", node, ns, svc, v.Reason, out)
		}
		return fmt.Errorf("%s: %s", v.Status, v.Reason)
	})
}
