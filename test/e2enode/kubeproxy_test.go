package e2enode

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeProxyRoutesClusterIP: kube-proxy in nftables mode, a DaemonSet
// Pod from the image built here, programs a Service whose slices
// kubectl-slices writes, and a client Pod's requests (all on the first
// node) to the ClusterIP reach exactly the ready backends: all three, then,
// one made not ready and the slices synced again, the two others only.
// kubectl exec into the kube-proxy Pod reads the node's rules with the
// image's nft (and sh): the Service's chain sends the ClusterIP to exactly
// the addresses that answer.
func TestKubeProxyRoutesClusterIP(t *testing.T) {
	requireNode(t)
	proxy := kubeProxyPods(t)[node.Name()]
	ns := newNamespace(t, nil)
	var manifests []string
	for i := 1; i <= 3; i++ {
		manifests = append(manifests, workloadPodIn(fmt.Sprintf("web-%d", i), map[string]string{"app": "web"}, zoneA))
	}
	manifests = append(manifests, workloadPodIn("client", map[string]string{"app": "client"}, zoneA), webService)
	kubectl(t, strings.Join(manifests, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
	backends := onNode(t, runningPods(t, ns, "app=web", 3, true), node.Name())
	client := onNode(t, runningPods(t, ns, "app=client", 1, true), node.Name())[0]
	svc, err := cluster.Admin.CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	for _, p := range backends {
		all[p.Name] = true
	}
	syncSlices(t, ns, backends)
	target := "http://" + svc.Spec.ClusterIP + "/hostname"
	waitAnswers(t, client, target, all)
	programs(t, proxy, ns, svc, backends)

	// web-3 fails its readiness probe; the slices say so; kube-proxy stops
	// sending it traffic.
	makeNotReady(t, backendNamed(t, backends, "web-3"))
	syncSlices(t, ns, backends, "web-3")
	waitAnswers(t, client, target, map[string]bool{"web-1": true, "web-2": true})
	programs(t, proxy, ns, svc, []corev1.Pod{backendNamed(t, backends, "web-1"), backendNamed(t, backends, "web-2")})
}

// TestKubeProxyRoutesAcrossNodes: on each node its kube-proxy (nftables
// on the first, iptables on the second) programs the Service's backends on
// both nodes, and a client Pod on each node reaches all of them across the
// nodes' link; one backend made not ready leaves both nodes' rules and
// traffic. Each node's rules are read through kubectl exec into its own
// kube-proxy Pod, with the binaries of its mode.
func TestKubeProxyRoutesAcrossNodes(t *testing.T) {
	requireNode(t)
	proxies := kubeProxyPods(t)
	ns := newNamespace(t, nil)
	manifests := []string{webService,
		workloadPodIn("web-a1", map[string]string{"app": "web"}, zoneA), workloadPodIn("web-a2", map[string]string{"app": "web"}, zoneA),
		workloadPodIn("web-b1", map[string]string{"app": "web"}, zoneB),
		workloadPodIn("client-a", map[string]string{"app": "client"}, zoneA), workloadPodIn("client-b", map[string]string{"app": "client"}, zoneB)}
	kubectl(t, strings.Join(manifests, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
	backends := runningPods(t, ns, "app=web", 3, true)
	clients := runningPods(t, ns, "app=client", 2, true)
	for _, p := range append(append([]corev1.Pod(nil), backends...), clients...) {
		want, cidr := node.Name(), podCIDR
		if strings.HasSuffix(p.Name, "-b1") || p.Name == "client-b" {
			want, cidr = nodeB.Name(), podCIDRB
		}
		n, err := cluster.Admin.CoreV1().Nodes().Get(context.Background(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != want || n.Spec.PodCIDR != cidr || !strings.HasPrefix(p.Status.PodIP, strings.TrimSuffix(cidr, "0/24")) {
			t.Fatalf("pod %s on %s (podCIDR %s) at %s, want %s in %s", p.Name, p.Spec.NodeName, n.Spec.PodCIDR, p.Status.PodIP, want, cidr)
		}
	}
	svc, err := cluster.Admin.CoreV1().Services(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	syncSlices(t, ns, backends)
	target := "http://" + svc.Spec.ClusterIP + "/hostname"
	all := map[string]bool{"web-a1": true, "web-a2": true, "web-b1": true}
	for _, c := range clients {
		waitAnswers(t, c, target, all)
	}
	for _, proxy := range proxies {
		programs(t, proxy, ns, svc, backends)
	}

	makeNotReady(t, backendNamed(t, backends, "web-b1"))
	syncSlices(t, ns, backends, "web-b1")
	for _, c := range clients {
		waitAnswers(t, c, target, map[string]bool{"web-a1": true, "web-a2": true})
	}
	for _, proxy := range proxies {
		programs(t, proxy, ns, svc, []corev1.Pod{backendNamed(t, backends, "web-a1"), backendNamed(t, backends, "web-a2")})
	}
}

// makeNotReady switches the workload Pod's readiness off and waits until
// the kubelet's probe reports it.
func makeNotReady(t *testing.T, pod corev1.Pod) {
	t.Helper()
	if code, body, err := httpDo("POST", fmt.Sprintf("http://%s:8000/ready/off", pod.Status.PodIP)); err != nil || code != 200 {
		t.Fatalf("POST /ready/off on %s: %d %q %v", pod.Name, code, body, err)
	}
	eventually(t, 30*time.Second, pod.Name+" not ready", func() error {
		p, err := cluster.Admin.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil || podReady(p) {
			return fmt.Errorf("still ready (%v)", err)
		}
		return nil
	})
}

// onNode fails the test unless every Pod runs on the node; it returns them.
func onNode(t *testing.T, pods []corev1.Pod, name string) []corev1.Pod {
	t.Helper()
	for _, p := range pods {
		if p.Spec.NodeName != name {
			t.Fatalf("pod %s on %q, want %s", p.Name, p.Spec.NodeName, name)
		}
	}
	return pods
}

// kubeProxyPods waits until each node's kube-proxy Pod is Ready and
// returns them by node.
func kubeProxyPods(t testing.TB) map[string]corev1.Pod {
	t.Helper()
	pods := runningPods(t, "kube-system", kubeProxyLabel, len(proxyModes), true)
	byNode := map[string]corev1.Pod{}
	for _, p := range pods {
		byNode[p.Spec.NodeName] = p
	}
	for _, m := range proxyModes {
		if p, ok := byNode[m.Node]; !ok || p.Labels[proxyModeLabel] != m.Mode {
			t.Fatalf("no %s kube-proxy Pod on %s: %v", m.Mode, m.Node, byNode)
		}
	}
	return byNode
}

// syncSlices writes the Service web's slices with kubectl slices sync and
// waits until they publish the backends, those named in notReady as not
// ready.
func syncSlices(t *testing.T, ns string, backends []corev1.Pod, notReady ...string) {
	t.Helper()
	kubectl(t, "", "slices", "sync", "svc/web", "-n", ns).ok(t)
	want := map[string]bool{}
	for _, p := range backends {
		want[p.Status.PodIP] = !contains(notReady, p.Name)
	}
	waitSlice(t, ns, "web", want)
}

// waitAnswers waits until 30 requests from the client Pod to target are
// all answered, by exactly the backends in want (their names).
func waitAnswers(t *testing.T, client corev1.Pod, target string, want map[string]bool) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s from %s answered by %v", target, client.Name, keys(want)), func() error {
		got, err := answers(client, target, 30)
		if err != nil {
			return err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("answered by %v", keys(got))
		}
		return nil
	})
}

// answers asks the client Pod to fetch target count times (the workload's
// /fetch) and returns who answered; a request not answered is an error.
func answers(client corev1.Pod, target string, count int) (map[string]bool, error) {
	code, body, err := httpGet(fmt.Sprintf("http://%s:8000/fetch?count=%d&url=%s", client.Status.PodIP, count, url.QueryEscape(target)))
	if err != nil || code != 200 {
		return nil, fmt.Errorf("fetch through %s: %d %v %s", client.Name, code, err, body)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "error:") {
			return nil, fmt.Errorf("from %s: %s", client.Name, line)
		}
		got[line] = true
	}
	return got, nil
}

// programs fails the test unless the node's rules, read through kubectl
// exec into its kube-proxy Pod, send the Service's ClusterIP port to
// exactly the Pods' addresses.
func programs(t *testing.T, proxy corev1.Pod, ns string, svc *corev1.Service, pods []corev1.Pod) {
	t.Helper()
	want := map[string]bool{}
	for _, p := range pods {
		want[p.Status.PodIP] = true
	}
	got, rules := programmedEndpoints(t, proxy, ns, svc)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("kube-proxy on %s sends %s/web to %v, want %v:\n%s", proxy.Spec.NodeName, ns, keys(got), keys(want), rules)
	}
}

// endpointAddr is an endpoint in a Service chain: "IP . port" in the map
// of a chain that DNATs itself, or the name of an endpoint chain
// ("endpoint-HASH-ns/name/tcp/port__IP/port") it jumps to.
var endpointAddr = regexp.MustCompile(`(?:: |__)(\d+\.\d+\.\d+\.\d+)(?: \. |/)\d+`)

// programmedEndpoints reads, through kubectl exec into the kube-proxy Pod,
// the endpoint addresses the node's rules send the Service's ClusterIP port
// to, and the rules it read: with nft in nftables mode, iptables-save in
// iptables mode.
func programmedEndpoints(t *testing.T, proxy corev1.Pod, ns string, svc *corev1.Service) (map[string]bool, string) {
	t.Helper()
	if proxy.Labels[proxyModeLabel] == "iptables" {
		return iptablesEndpoints(t, proxy, ns, svc)
	}
	// nftables: the service-ips map sends "ip . tcp . port" to the
	// Service's chain (an image without /etc/protocols prints tcp as 6).
	m := kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "sh", "-c", "nft list map ip kube-proxy service-ips").ok(t)
	element := regexp.MustCompile(regexp.QuoteMeta(svc.Spec.ClusterIP) + ` \. (?:tcp|6) \. ` + fmt.Sprint(svc.Spec.Ports[0].Port) + ` : goto ([^,\s}]+)`)
	match := element.FindStringSubmatch(m)
	if match == nil {
		t.Fatalf("no element for %s in kube-proxy's service-ips map on %s:\n%s", svc.Spec.ClusterIP, proxy.Spec.NodeName, m)
	}
	out := kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "nft", "list", "chain", "ip", "kube-proxy", match[1]).ok(t)
	if !strings.Contains(out, ns+"/web") {
		t.Fatalf("chain %s is not %s/web's:\n%s", match[1], ns, out)
	}
	got := map[string]bool{}
	for _, a := range endpointAddr.FindAllStringSubmatch(out, -1) {
		got[a[1]] = true
	}
	return got, out
}

// iptablesEndpoints reads the nat table: KUBE-SERVICES jumps from the
// ClusterIP's port to the Service's KUBE-SVC chain, which jumps to a
// KUBE-SEP chain per endpoint, each DNATing to its address.
func iptablesEndpoints(t *testing.T, proxy corev1.Pod, ns string, svc *corev1.Service) (map[string]bool, string) {
	t.Helper()
	out := kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "iptables-save", "-t", "nat").ok(t)
	lines := strings.Split(out, "\n")
	svcChain := ""
	prefix := fmt.Sprintf("-A KUBE-SERVICES -d %s/32 -p tcp -m comment --comment \"%s/web:http cluster IP\" -m tcp --dport %d -j ",
		svc.Spec.ClusterIP, ns, svc.Spec.Ports[0].Port)
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			svcChain = strings.TrimPrefix(l, prefix)
		}
	}
	if svcChain == "" {
		t.Fatalf("no %q in the nat table on %s:\n%s", prefix, proxy.Spec.NodeName, out)
	}
	seps := map[string]bool{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "-A" && f[1] == svcChain && f[len(f)-2] == "-j" && strings.HasPrefix(f[len(f)-1], "KUBE-SEP-") {
			seps[f[len(f)-1]] = true
		}
	}
	got := map[string]bool{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "-A" && seps[f[1]] && f[len(f)-2] == "--to-destination" {
			got[f[len(f)-1][:strings.LastIndex(f[len(f)-1], ":")]] = true
		}
	}
	return got, out
}

func backendNamed(t *testing.T, pods []corev1.Pod, name string) corev1.Pod {
	t.Helper()
	for _, p := range pods {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no Pod %s", name)
	return corev1.Pod{}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
