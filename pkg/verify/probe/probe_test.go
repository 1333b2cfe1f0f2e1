package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	streamhttp "k8s.io/streaming/pkg/httpstream"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

func readyNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func proxyPodOn(name, node string, labels map[string]string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ProxyNamespace, Name: name, Labels: labels},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kube-proxy"}}},
		Status: corev1.PodStatus{Phase: phase}}
}

// client is a fake clientset whose access reviews allow all but denied.
func client(denied map[string]bool, objs ...runtime.Object) *fake.Clientset {
	c := fake.NewClientset(objs...)
	c.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview)
		attr := r.Spec.ResourceAttributes
		r.Status.Allowed = !denied[attr.Verb+" "+attr.Resource+"/"+attr.Subresource]
		return true, r, nil
	})
	return c
}

// fakeTransport answers as a healthy nftables kube-proxy unless told to
// hang or answer otherwise.
type fakeTransport struct {
	hang    bool
	healthz []byte
	metrics []byte
	err     error
}

const goodMetrics = `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} 1.7e+09` + "\n"

func (f fakeTransport) ProxyGet(ctx context.Context, ns, pod string, port int, path string, limit int64) (int, []byte, error) {
	if f.hang {
		<-ctx.Done()
		return 0, nil, ctx.Err()
	}
	if f.err != nil {
		return 0, nil, f.err
	}
	body := f.healthz
	if body == nil {
		body = []byte(`{"healthy":true,"lastUpdated":"2026-11-27T05:00:00Z"}`)
	}
	return 200, body, nil
}

func (f fakeTransport) ForwardGet(ctx context.Context, ns, pod string, port int, paths []string, limit int64) ([]Answer, error) {
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	m := f.metrics
	if m == nil {
		m = []byte(goodMetrics)
	}
	return []Answer{{200, m}, {200, []byte("nftables")}}, nil
}

func (f fakeTransport) ForwardDial(ctx context.Context, ns, pod string, port int) (dnsread.Dial, func(), error) {
	return nil, nil, errors.New("no DNS here")
}

func (f fakeTransport) Exec(ns, pod, container string) proxyread.Exec {
	return func(ctx context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) { return nil, nil }
}

// countingReader records the wants it is asked for.
type countingReader struct{ calls *int }

func (c countingReader) Read(ctx context.Context, exec proxyread.Exec, want []proxyread.Want) (proxyread.Reading, error) {
	*c.calls++
	return proxyread.Reading{Mode: proxyread.ModeNftables}, nil
}

func options(c kubernetes.Interface, t Transport) Options {
	calls := 0
	return Options{Client: c, Transport: t, NodeTimeout: 300 * time.Millisecond, Concurrency: 2, Limit: 1 << 20,
		Readers: map[proxyread.Mode]proxyread.Reader{proxyread.ModeNftables: countingReader{&calls}}}
}

// probe reads the nodes with the rights the caller has.
func probe(o Options, nodes []*corev1.Node, svcs []verdict.Service) []verdict.NodeState {
	ctx := context.Background()
	return readNodes(ctx, o, preflight(ctx, o.Client, ProxyNamespace), nodes, svcs)
}

func byNode(states []verdict.NodeState) map[string]verdict.NodeState {
	out := map[string]verdict.NodeState{}
	for _, s := range states {
		out[s.Node.Name] = s
	}
	return out
}

func TestFindsEachNodesProxy(t *testing.T) {
	owned := proxyPodOn("kp-owned", "n-owned", nil, corev1.PodRunning)
	owned.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "kube-proxy"}}
	notReady := readyNode("n-notready")
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	objs := []runtime.Object{
		proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning), owned,
		proxyPodOn("cilium-x", "n-cilium", map[string]string{"k8s-app": "cilium"}, corev1.PodRunning),
		proxyPodOn("calico-x", "n-calico", map[string]string{"k8s-app": "calico-node"}, corev1.PodRunning),
		proxyPodOn("kp-pending", "n-pending", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodPending),
		proxyPodOn("cilium-both", "n-both", map[string]string{"k8s-app": "cilium"}, corev1.PodRunning),
		proxyPodOn("kp-both", "n-both", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning),
		proxyPodOn("cilium-both2", "n-both", map[string]string{"app.kubernetes.io/name": "cilium-agent"}, corev1.PodRunning),
		proxyPodOn("other", "n-none", map[string]string{"k8s-app": "coredns"}, corev1.PodRunning),
	}
	nodes := []*corev1.Node{readyNode("n-a"), readyNode("n-owned"), readyNode("n-cilium"), readyNode("n-calico"), readyNode("n-pending"), readyNode("n-none"), readyNode("n-both"), notReady}
	got := byNode(probe(options(client(nil, objs...), fakeTransport{}), nodes, nil))
	for node, want := range map[string]string{
		"n-a": "", "n-owned": "", "n-both": "", "n-cilium": "cilium (Pod kube-system/cilium-x) serves this node's Services: a proxy that is not kube-proxy is not supported",
		"n-calico": "calico (Pod kube-system/calico-x) serves", "n-pending": "kube-proxy Pod kube-system/kp-pending is Pending, not Running",
		"n-none": "no kube-proxy Pod on the node", "n-notready": "the node is NotReady",
	} {
		st := got[node]
		if (want == "") != (st.Unreadable == "") || !strings.Contains(st.Unreadable, want) {
			t.Errorf("%s: unreadable %q, want %q", node, st.Unreadable, want)
		}
		if want == "" && (st.Healthz.Value == nil || st.Metrics.Value == nil || st.Rules.Value == nil) {
			t.Errorf("%s: tiers %+v %+v %+v", node, st.Healthz, st.Metrics, st.Rules)
		}
	}
}

func TestDeniedTiersNameTheRight(t *testing.T) {
	c := client(map[string]bool{"create pods/exec": true, "create pods/portforward": true},
		proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning))
	st := probe(options(c, fakeTransport{}), []*corev1.Node{readyNode("n-a")}, nil)[0]
	if st.Healthz.Value == nil || st.Metrics.Denied != "create pods/portforward in kube-system" || st.Rules.Denied != "create pods/exec in kube-system" {
		t.Fatalf("healthz %+v metrics %+v rules %+v", st.Healthz, st.Metrics, st.Rules)
	}
}

// A hung kube-proxy answers no HTTP: each HTTP tier gives up after a
// quarter of the node timeout, and its rules are still read, with the
// mode its --config file says.
func TestHangingNodeIsBoundedAndOthersVerified(t *testing.T) {
	hung := proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning)
	hung.Spec.Containers[0].Command = []string{"kube-proxy", "--config=/var/lib/kube-proxy/config.conf"}
	c := client(nil, hung, proxyPodOn("kp-b", "n-b", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning))
	o := options(c, hangOn{pod: "kp-a", config: "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: nftables\n"})
	start := time.Now()
	got := byNode(probe(o, []*corev1.Node{readyNode("n-a"), readyNode("n-b")}, nil))
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("took %s with a node timeout of %s", took, o.NodeTimeout)
	}
	if a := got["n-a"]; a.Healthz.Err != "no answer within 75ms" || a.Metrics.Err != "no answer within 75ms" || a.Rules.Value == nil {
		t.Errorf("hanging node: %+v", a)
	}
	// A configuration without a mode is kube-proxy's Linux default.
	o = options(c, hangOn{pod: "kp-a", config: "kind: KubeProxyConfiguration\n"})
	if a := byNode(probe(o, []*corev1.Node{readyNode("n-a")}, nil))["n-a"]; a.Rules.Err != "no rule reader for kube-proxy's iptables mode" {
		t.Errorf("no mode in the configuration: %+v", a.Rules)
	}
	o = options(c, hangOn{pod: "kp-a", config: "kind: Other\nmode: nftables\n"})
	if a := byNode(probe(o, []*corev1.Node{readyNode("n-a")}, nil))["n-a"]; !strings.Contains(a.Rules.Err, "is not a KubeProxyConfiguration") {
		t.Errorf("another kind of file: %+v", a.Rules)
	}
	if b := got["n-b"]; b.Healthz.Value == nil || b.Rules.Value == nil {
		t.Errorf("the other node: %+v", b)
	}
}

// hangOn hangs for one Pod and answers well for the others; an exec of
// the shell (reading a file) prints config.
type hangOn struct{ pod, config string }

func (h hangOn) ProxyGet(ctx context.Context, ns, pod string, port int, path string, limit int64) (int, []byte, error) {
	return fakeTransport{hang: pod == h.pod}.ProxyGet(ctx, ns, pod, port, path, limit)
}
func (h hangOn) ForwardGet(ctx context.Context, ns, pod string, port int, paths []string, limit int64) ([]Answer, error) {
	return fakeTransport{hang: pod == h.pod}.ForwardGet(ctx, ns, pod, port, paths, limit)
}
func (h hangOn) ForwardDial(ctx context.Context, ns, pod string, port int) (dnsread.Dial, func(), error) {
	return fakeTransport{}.ForwardDial(ctx, ns, pod, port)
}
func (h hangOn) Exec(ns, pod, container string) proxyread.Exec {
	return func(ctx context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
		if len(argv) == 5 && argv[0] == "sh" && argv[4] == "/var/lib/kube-proxy/config.conf" {
			return []byte(h.config), nil
		}
		return nil, nil
	}
}

func TestGarbageAnswersAreUnknownWithReason(t *testing.T) {
	c := client(nil, proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning))
	tr := fakeTransport{healthz: []byte("\x1b[31mOK"), metrics: []byte("<html>hello</html>")}
	st := probe(options(c, tr), []*corev1.Node{readyNode("n-a")}, nil)[0]
	if st.Healthz.Value != nil || !strings.Contains(st.Healthz.Err, "not kube-proxy's health JSON") || strings.ContainsRune(st.Healthz.Err, 0x1b) {
		t.Errorf("healthz %+v", st.Healthz)
	}
	if st.Metrics.Value != nil || !strings.Contains(st.Metrics.Err, "not kube-proxy's metrics") {
		t.Errorf("metrics %+v", st.Metrics)
	}
	if st.Rules.Value != nil || st.Rules.Err != "no rule reader for kube-proxy's iptables mode" {
		t.Errorf("rules %+v", st.Rules)
	}
	rep := verdict.Judge(verdict.Input{Nodes: []verdict.NodeState{st}})
	if rep.Nodes[0].Status != verdict.Unknown {
		t.Errorf("status %s", rep.Nodes[0].Status)
	}
	tr = fakeTransport{err: errors.New("boom\nsecond line " + strings.Repeat("x", 500))}
	st = probe(options(c, tr), []*corev1.Node{readyNode("n-a")}, nil)[0]
	if strings.Contains(st.Healthz.Err, "\n") || len(st.Healthz.Err) > english.ClipLen+english.ClipTail {
		t.Errorf("healthz error not one clipped line: %q", st.Healthz.Err)
	}
}

// restAgainst is the REST transport against a fake API server.
func restAgainst(t *testing.T, h http.HandlerFunc) *REST {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewREST(cfg, cs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestProxyGetBoundedInSizeAndTime(t *testing.T) {
	endless := restAgainst(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/namespaces/kube-system/pods/kp:10256/proxy/healthz" {
			http.Error(w, r.URL.Path, 404)
			return
		}
		w.WriteHeader(503)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte(strings.Repeat("x", 4096))); err != nil {
				return
			}
		}
	})
	_, _, err := endless.ProxyGet(context.Background(), "kube-system", "kp", HealthzPort, "healthz", 1<<16)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("an endless 503: %v, want ErrTooLarge", err)
	}
	slow := restAgainst(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := slow.ProxyGet(ctx, "kube-system", "kp", HealthzPort, "healthz", 1<<16); err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a never-ending answer: %v after %s", err, time.Since(start))
	}
	status := restAgainst(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"error trying to reach service: dial tcp 192.0.2.1:10256: i/o timeout","code":503}`)
	})
	code, body, err := status.ProxyGet(context.Background(), "kube-system", "kp", HealthzPort, "healthz", 1<<16)
	if err := orStatus(err, code, body); err == nil || !strings.Contains(err.Error(), "the API server could not reach the Pod: error trying to reach service") {
		t.Fatalf("the API server's Status: %v", err)
	}
}

func TestOneExecReadPerNode(t *testing.T) {
	calls := 0
	c := client(nil, proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning))
	o := options(c, fakeTransport{})
	o.Readers[proxyread.ModeNftables] = countingReader{&calls}
	var svcs []verdict.Service
	for i := range 50 {
		svcs = append(svcs, verdict.Service{Service: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("s%d", i)},
			Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", ClusterIPs: []string{"10.96.0.1"}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
				Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}})
	}
	probe(o, []*corev1.Node{readyNode("n-a")}, svcs)
	if calls != 1 {
		t.Fatalf("%d reads for 50 Services on one node, want 1", calls)
	}
}

func TestModeOfThePodsCommandLine(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"kube-proxy", "--proxy-mode=nftables"}, "nftables"},
		{[]string{"kube-proxy", "--config=/c.yaml", "--proxy-mode", "ipvs"}, "ipvs"},
		{[]string{"kube-proxy", "--config=/var/lib/kube-proxy/config.conf"}, ""},
		{[]string{"kube-proxy", "--v=2"}, "iptables"},
	} {
		p := proxyPodOn("kp", "n", nil, corev1.PodRunning)
		p.Spec.Containers = []corev1.Container{{Name: "sidecar", Args: []string{"--proxy-mode=bogus"}}, {Name: "kube-proxy", Command: c.argv}}
		if got := modeOf(p); got != c.want {
			t.Errorf("%v: %q, want %q", c.argv, got, c.want)
		}
	}
}

func TestModeFromThePodWithoutMetrics(t *testing.T) {
	p := proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning)
	p.Spec.Containers[0].Command = []string{"kube-proxy", "--proxy-mode=nftables"}
	c := client(map[string]bool{"create pods/portforward": true}, p)
	st := probe(options(c, fakeTransport{}), []*corev1.Node{readyNode("n-a")}, nil)[0]
	if st.Metrics.Value != nil || st.Rules.Value == nil {
		t.Fatalf("metrics %+v rules %+v", st.Metrics, st.Rules)
	}
}

func TestExecOutputBounded(t *testing.T) {
	var b bytes.Buffer
	l := &limitedBuffer{buf: &b, limit: 8}
	if _, err := l.Write([]byte("12345")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("6789")); !errors.Is(err, ErrTooLarge) || b.String() != "12345" {
		t.Fatalf("past the limit: %v, kept %q", err, b.String())
	}
}

// client-go's websocket executor and dialer fail an upgrade with
// k8s.io/streaming's UpgradeFailureError: that is what falls back to SPDY.
func TestWebsocketUpgradeFailureFallsBack(t *testing.T) {
	forbidden := &streamhttp.UpgradeFailureError{Cause: errors.New(`pods "kp" is forbidden: cannot get resource "pods/exec"`)}
	if !fallback(fmt.Errorf("exec: %w", forbidden)) {
		t.Error("a failed websocket upgrade does not fall back to SPDY")
	}
	if fallback(errors.New("connection reset")) {
		t.Error("any error falls back")
	}
}

// A socket's deadline, passed a moment before its ctx's, is the node
// timeout too.
func TestSocketDeadlineIsTheTimeout(t *testing.T) {
	err := fmt.Errorf("reading x: %w", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
	got := result(context.Background(), time.Second, err, func() (int, error) { return 0, nil })
	if got.Err != "no answer within 1s" {
		t.Errorf("got %q", got.Err)
	}
}
