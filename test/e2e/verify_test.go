package e2e

import (
	"context"
	"encoding/json"
	"net"
	stdslices "slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// verifyReport is the part of `verify -o json` the tests read.
type verifyReport struct {
	Status   string `json:"status"`
	Services []struct {
		Slices     int    `json:"slices"`
		Plan       string `json:"plan"`
		PlanDetail string `json:"planDetail"`
	} `json:"services"`
	Nodes     []verifyNode `json:"nodes"`
	Diagnosis string       `json:"diagnosis"`
	Next      string       `json:"next"`
}

type verifyNode struct {
	Node     string `json:"node"`
	Proxy    string `json:"proxy"`
	Pod      string `json:"pod"`
	Expected int    `json:"expected"`
	Status   string `json:"status"`
	Reason   string `json:"reason"`
	Tiers    []struct {
		Tier   string `json:"tier"`
		OK     bool   `json:"ok"`
		Reason string `json:"reason"`
	} `json:"tiers"`
}

func parseVerify(t *testing.T, r result) verifyReport {
	t.Helper()
	var rep verifyReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	return rep
}

func (r verifyReport) node(t *testing.T, name string) int {
	t.Helper()
	for i, n := range r.Nodes {
		if n.Node == name {
			return i
		}
	}
	t.Fatalf("no row for node %s in %+v", name, r.Nodes)
	return -1
}

// proxyOnNode makes a Ready node and, on it, a Running Pod in kube-system
// with labels at address ip.
func proxyOnNode(t *testing.T, node, pod string, labels map[string]string, ip string) {
	t.Helper()
	proxyOn(t, controlplane.NodeSpec{Name: node, Zone: "zone-a", CPU: "4"}, pod, labels, ip)
}

func proxyOn(t *testing.T, spec controlplane.NodeSpec, pod string, labels map[string]string, ip string) {
	t.Helper()
	ctx := context.Background()
	node := spec.Name
	if err := shared.Node(ctx, spec); err != nil {
		t.Fatal(err)
	}
	// No controller makes kube-system's default ServiceAccount here; admission wants it.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "kube-system"}}
	if _, err := shared.Admin.CoreV1().ServiceAccounts("kube-system").Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := shared.Pod(ctx, "kube-system", controlplane.PodSpec{Name: pod, Labels: labels, Node: node, IPs: []string{ip}, Ready: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = shared.Admin.CoreV1().Pods("kube-system").Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		_ = shared.Admin.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
	})
}

// Nodes without a kube-proxy Pod are UNKNOWN with the reason, the other
// columns filled, and the run exits 6 (could not verify).
func TestVerifyNoKubeProxy(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 2))
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	r := slices(t, "verify", "svc/web", "-n", ns).mustCode(t, 6)
	for _, want := range []string{"node-a1", "UNKNOWN", "no kube-proxy Pod on the node", "NAMESPACE", ns, "Next: kubectl get pods -A -o wide --field-selector spec.nodeName="} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	rep := parseVerify(t, slices(t, "verify", "svc/web", "-n", ns, "-o", "json").mustCode(t, 6))
	row := rep.Nodes[rep.node(t, "node-a1")]
	if rep.Status != "UNKNOWN" || row.Status != "UNKNOWN" || row.Proxy != "none" || row.Expected != 0 {
		t.Errorf("report %s, row %+v", rep.Status, row)
	}
	if len(rep.Services) != 1 || rep.Services[0].Plan != "agrees" || rep.Services[0].Slices != 1 {
		t.Errorf("services %+v", rep.Services)
	}

	// --node reads the one node; a name that is no node exits 3, worded,
	// and its name completes.
	rep = parseVerify(t, slices(t, "verify", "svc/web", "-n", ns, "--node", "node-a1", "-o", "json").mustCode(t, 6))
	if len(rep.Nodes) != 1 || rep.Nodes[0].Node != "node-a1" {
		t.Errorf("--node node-a1: rows %+v", rep.Nodes)
	}
	r = slices(t, "verify", "svc/web", "-n", ns, "--node", "node-a1,no-such-node").mustCode(t, 3)
	if r.Stdout != "" || strings.TrimSpace(r.Stderr) != `error: node "no-such-node" not found: check the name (kubectl get nodes lists them)` {
		t.Errorf("--node no-such-node: stdout %q, stderr %q", r.Stdout, r.Stderr)
	}
	r = slices(t, "__complete", "verify", "svc/web", "-n", ns, "--node", "node-a").mustCode(t, 0)
	if got := completions(r.Stdout); !contains(got, "node-a1") {
		t.Errorf("--node completions %v lack node-a1", got)
	}
}

// Slices in the API that differ from the plan (here: none written yet for
// a Service whose Pods are ready) are drift, exit 1, whatever the nodes
// say, and the next command is diff.
func TestVerifySlicesDifferFromPlan(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 2))
	r := slices(t, "verify", "svc/web", "-n", ns, "-o", "json").mustCode(t, 1)
	rep := parseVerify(t, r)
	if rep.Status != "DRIFT" || rep.Services[0].Plan != "differs" || !strings.Contains(rep.Services[0].PlanDetail, "the plan reaches") ||
		rep.Next != "kubectl slices diff svc/web -n "+ns {
		t.Errorf("report %+v", rep)
	}
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if rep := parseVerify(t, slices(t, "verify", "svc/web", "-n", ns, "-o", "json").mustCode(t, 6)); rep.Services[0].Plan != "agrees" {
		t.Errorf("after sync: %+v", rep.Services)
	}
}

// A Pod labelled as Cilium's agent makes its node "not supported", never
// guessed at; a NotReady node is UNKNOWN unread.
func TestVerifyOtherProxyNotSupported(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	proxyOnNode(t, "verify-cilium", "cilium-x1", map[string]string{"k8s-app": "cilium"}, "10.250.0.1")
	proxyOn(t, controlplane.NodeSpec{Name: "verify-notready", Zone: "zone-a", CPU: "4", NotReady: true}, "kube-proxy-nr", map[string]string{"k8s-app": "kube-proxy"}, "10.250.0.2")
	rep := parseVerify(t, slices(t, "verify", "svc/web", "-n", ns, "-o", "json").mustCode(t, 6))
	row := rep.Nodes[rep.node(t, "verify-cilium")]
	if row.Status != "UNKNOWN" || row.Proxy != "cilium" || !strings.Contains(row.Reason, "not supported") || len(row.Tiers) != 0 {
		t.Errorf("row %+v", row)
	}
	// A NotReady node is not read, and says why.
	if row := rep.Nodes[rep.node(t, "verify-notready")]; row.Status != "UNKNOWN" || row.Reason != "the node is NotReady" || row.Proxy != "kube-proxy" {
		t.Errorf("row %+v", row)
	}
}

// A kube-proxy Pod whose address refuses, and one whose /healthz accepts
// the connection and never answers, are UNKNOWN within the node timeout
// while the other nodes are verified.
func TestVerifyUnreachableNode(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	proxyOnNode(t, "verify-far", "kube-proxy-far", map[string]string{"k8s-app": "kube-proxy"}, "192.0.2.1")
	if ip, ok := silentHealthz(t); ok {
		proxyOnNode(t, "verify-silent", "kube-proxy-silent", map[string]string{"k8s-app": "kube-proxy"}, ip)
	}
	start := time.Now()
	r := slices(t, "verify", "svc/web", "-n", ns, "-o", "json", "--node-timeout", "3s").mustCode(t, 6)
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("verify took %s with --node-timeout 3s", took)
	}
	rep := parseVerify(t, r)
	for _, name := range []string{"verify-far", "verify-silent"} {
		i := stdslices.IndexFunc(rep.Nodes, func(n verifyNode) bool { return n.Node == name })
		if i < 0 {
			continue
		}
		row := rep.Nodes[i]
		if row.Status != "UNKNOWN" || row.Proxy != "kube-proxy" || len(row.Tiers) != 3 || row.Tiers[0].OK {
			t.Fatalf("row %+v", row)
		}
		t.Logf("%s: healthz: %s; metrics: %s; rules: %s", name, row.Tiers[0].Reason, row.Tiers[1].Reason, row.Tiers[2].Reason)
		// Each HTTP tier has a quarter of the node's time, so that the
		// rules of a hung kube-proxy are still read.
		if name == "verify-silent" && row.Tiers[0].Reason != "no answer within 750ms" {
			t.Errorf("a silent /healthz: %q", row.Tiers[0].Reason)
		}
	}
	if rep.Nodes[rep.node(t, "node-a1")].Reason != "no kube-proxy Pod on the node (kube-system, k8s-app=kube-proxy)" {
		t.Errorf("the other nodes: %+v", rep.Nodes)
	}
}

// silentHealthz listens on this host's first non-loopback IPv4 address at
// kube-proxy's healthz port and holds every connection without a word; the
// API server proxies to it as to a hung kube-proxy.
func silentHealthz(t *testing.T) (string, bool) {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.To4() == nil {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(ipn.IP.String(), "10256"))
		if err != nil {
			t.Logf("no silent /healthz: %v", err)
			return "", false
		}
		var held []net.Conn
		var mu sync.Mutex
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
		t.Cleanup(func() {
			l.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range held {
				c.Close()
			}
		})
		return ipn.IP.String(), true
	}
	t.Log("no non-loopback IPv4 address for a silent /healthz")
	return "", false
}

// A ServiceAccount with read rights only gets the no-exec tier and the
// missing rights named, and exit 6.
func TestVerifyReadOnlyUser(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	proxyOnNode(t, "verify-ro", "kube-proxy-ro", map[string]string{"k8s-app": "kube-proxy"}, "192.0.2.2")
	kubeconfig := clusterReader(t, ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "pods", "nodes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"pods/proxy"}, Verbs: []string{"get"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list"}},
	})
	r := slices(t, "verify", "svc/web", "-n", ns, "-o", "json", "--node-timeout", "2s", "--kubeconfig", kubeconfig).mustCode(t, 6)
	rep := parseVerify(t, r)
	row := rep.Nodes[rep.node(t, "verify-ro")]
	reasons := map[string]string{}
	for _, tier := range row.Tiers {
		reasons[tier.Tier] = tier.Reason
	}
	if reasons["metrics"] != "forbidden: needs create pods/portforward in kube-system" || reasons["rules"] != "forbidden: needs create pods/exec in kube-system" ||
		strings.HasPrefix(reasons["healthz"], "forbidden") {
		t.Errorf("tiers %v", reasons)
	}
	if row.Status != "UNKNOWN" || row.Reason != "forbidden: needs create pods/exec in kube-system" {
		t.Errorf("row %+v", row)
	}
	if rep.Next != "kubectl auth can-i create pods/exec -n kube-system" {
		t.Errorf("next %q, diagnosis %q", rep.Next, rep.Diagnosis)
	}
}

// Bad input: one line, the documented code, nothing verified.
func TestVerifyErrors(t *testing.T) {
	ns := newNamespace(t, shared)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "svc/nope", "-n", ns}, 3, "service " + ns + "/nope not found"},
		{[]string{"verify", "svc/web", "-n", ns, "--frobnicate"}, 2, "unknown flag: --frobnicate"},
		{[]string{"verify", "svc/web", "-n", ns, "--node-timeout", "0s"}, 2, "--node-timeout, --concurrency, --max-answer-size and --sync-period must be positive"},
		{[]string{"verify", "svc/web", "-n", ns, "-o", "wide"}, 2, `-o must be json or yaml, got "wide"`},
	} {
		r := slices(t, c.args...).mustCode(t, c.code)
		if line := strings.TrimSpace(r.Stderr); !strings.HasPrefix(line, "error: ") || !strings.Contains(line, c.want) || r.Stdout != "" {
			t.Errorf("%v: stderr %q stdout %q, want one line with %q", c.args, line, r.Stdout, c.want)
		}
	}
}

// clusterReader is a ServiceAccount of ns bound to a ClusterRole of rules,
// its kubeconfig with a token from the TokenRequest API.
func clusterReader(t *testing.T, ns string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	path := namespaceUser(t, shared, ns, nil)
	name := "verify-reader-" + ns
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	if _, err := shared.Admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "watcher", Namespace: ns}}}
	if _, err := shared.Admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = shared.Admin.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		_ = shared.Admin.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return path
}
