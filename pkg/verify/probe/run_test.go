package probe

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// lateReader programs nothing on its first read and the expected
// endpoints on the next: a proxy that catches up.
type lateReader struct{ calls *int }

func (l lateReader) Read(ctx context.Context, exec proxyread.Exec, want []proxyread.Want) (proxyread.Reading, error) {
	*l.calls++
	r := proxyread.Reading{Mode: proxyread.ModeNftables}
	for _, w := range want {
		st := proxyread.PortState{Want: w, Dispatch: true}
		if *l.calls > 1 {
			for _, ep := range w.Port.Cluster {
				st.Cluster.Endpoints = append(st.Cluster.Endpoints, ep.String())
			}
		}
		r.Ports = append(r.Ports, st)
	}
	return r, nil
}

func webObjects() (*corev1.Service, []runtime.Object) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n-a", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	yes, port, tcp, name := true, int32(8080), corev1.ProtocolTCP, "http"
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-abc",
		Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, NodeName: ptrTo("n-a"),
			Conditions: discoveryv1.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: new(bool)}}},
		Ports: []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: &tcp}}}
	kp := proxyPodOn("kp-a", "n-a", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning)
	return svc, []runtime.Object{svc, pod, slice, kp, readyNode("n-a")}
}

func ptrTo[T any](v T) *T { return &v }

func TestSettleReadsDriftingNodesAgain(t *testing.T) {
	for _, settle := range []bool{false, true} {
		svc, objs := webObjects()
		c := client(nil)
		for _, o := range objs {
			if err := c.Tracker().Add(o); err != nil {
				t.Fatal(err)
			}
		}
		calls := 0
		o := options(c, fakeTransport{})
		o.Readers[proxyread.ModeNftables] = lateReader{&calls}
		r := Run{Options: o, Settle: settle, SyncPeriod: 10 * time.Millisecond}
		rep, err := r.Report(context.Background(), []syncer.Target{{Service: svc, Namespace: "shop", Name: "web"}}, false)
		if err != nil {
			t.Fatal(err)
		}
		want, reads := verdict.Drift, 1
		if settle {
			want, reads = verdict.OK, 2
		}
		if rep.Nodes[0].Status != want || calls != reads || rep.Status != want {
			t.Errorf("settle %t: node %s (%+v), run %s, %d reads; want %s, %d reads; services %+v", settle, rep.Nodes[0].Status, rep.Nodes[0].Missing, rep.Status, calls, want, reads, rep.Services)
		}
	}
}

func TestNoServicesSelectedReadsNoNode(t *testing.T) {
	o := options(client(nil), hangOn{pod: "any"})
	rep, err := Run{Options: o, SyncPeriod: time.Second}.Report(context.Background(), nil, true)
	if err != nil || rep.Status != verdict.OK || len(rep.Nodes) != 0 || rep.Diagnosis != "no Services selected: nothing to verify" {
		t.Fatalf("%+v, %v", rep, err)
	}
}

// hangReader reads until the node's time is up.
type hangReader struct{}

func (hangReader) Read(ctx context.Context, exec proxyread.Exec, want []proxyread.Want) (proxyread.Reading, error) {
	<-ctx.Done()
	return proxyread.Reading{}, ctx.Err()
}

// hangAll hangs every read, the DNS replica's port-forward too.
type hangAll struct{ fakeTransport }

func (hangAll) ForwardDial(ctx context.Context, ns, pod string, port int) (dnsread.Dial, func(), error) {
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// A node that hangs (its kubelet stopped) and its DNS replica are read at
// once: the run waits one node timeout, not one for each.
func TestNodesAndReplicasReadAtOnce(t *testing.T) {
	svc, objs := webObjects()
	kp := objs[3].(*corev1.Pod)
	kp.Spec.Containers[0].Command = []string{"kube-proxy", "--proxy-mode=nftables"}
	c := client(nil)
	for _, o := range append(objs, dnsPod("dns-a")) {
		if err := c.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	o := options(c, hangAll{fakeTransport{hang: true}})
	o.NodeTimeout = time.Second
	o.Readers[proxyread.ModeNftables] = hangReader{}
	start := time.Now()
	rep, err := Run{Options: o, SyncPeriod: time.Second}.Report(context.Background(), []syncer.Target{{Service: svc, Namespace: "shop", Name: "web"}}, false)
	took := time.Since(start)
	if err != nil || len(rep.Nodes) != 1 || rep.Nodes[0].Status != verdict.Unknown || len(rep.DNS) != 1 || rep.DNS[0].Status != "UNKNOWN" {
		t.Fatalf("%v: nodes %+v dns %+v", err, rep.Nodes, rep.DNS)
	}
	if took > 1700*time.Millisecond {
		t.Errorf("took %s with a node timeout of 1s", took)
	}
}

// perNode counts reads by node (the Pod the exec goes to) and programs the
// expected endpoints on every read but node n-a's first.
type perNode struct{ reads map[string]int }

func (p perNode) Read(ctx context.Context, exec proxyread.Exec, want []proxyread.Want) (proxyread.Reading, error) {
	out, _ := exec(ctx, []string{"node"}, nil, 64)
	node := string(out)
	p.reads[node]++
	r := proxyread.Reading{Mode: proxyread.ModeNftables}
	for _, w := range want {
		st := proxyread.PortState{Want: w, Dispatch: true}
		if node != "n-a" || p.reads[node] > 1 {
			for _, ep := range w.Port.Cluster {
				st.Cluster.Endpoints = append(st.Cluster.Endpoints, ep.String())
			}
		}
		r.Ports = append(r.Ports, st)
	}
	return r, nil
}

// namedExec answers every exec with the node its Pod is on.
type namedExec struct{ fakeTransport }

func (namedExec) Exec(ns, pod, container string) proxyread.Exec {
	return func(ctx context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
		return []byte("n-" + pod[len("kp-"):]), nil
	}
}

func TestSettleReadsEveryNodeAgainWithTheSlicesOfThen(t *testing.T) {
	svc, objs := webObjects()
	objs = append(objs, proxyPodOn("kp-b", "n-b", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning), readyNode("n-b"))
	c := client(nil)
	for _, o := range objs {
		if err := c.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	reads := map[string]int{}
	o := options(c, namedExec{})
	o.Readers[proxyread.ModeNftables] = perNode{reads}
	rep, err := Run{Options: o, Settle: true, SyncPeriod: 10 * time.Millisecond}.Report(context.Background(),
		[]syncer.Target{{Service: svc, Namespace: "shop", Name: "web"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if reads["n-a"] != 2 || reads["n-b"] != 2 || rep.Status != verdict.OK {
		t.Fatalf("reads %v, run %s: with --settle every node is read again and the second reading reported", reads, rep.Status)
	}
}

// A round judges the slices its plans were made from, read once (one list
// for one Service, one per namespace for several), and the caller's rights
// are reviewed once a run, not once a tier's user and round.
func TestOneReadOfTheSlicesARoundAndOneReviewARun(t *testing.T) {
	for _, services := range []int{1, 2} {
		svc, objs := webObjects()
		targets := []syncer.Target{{Service: svc, Namespace: "shop", Name: "web"}}
		if services == 2 {
			api := svc.DeepCopy()
			api.Name = "api"
			slice := objs[2].(*discoveryv1.EndpointSlice).DeepCopy()
			slice.Name, slice.Labels[discoveryv1.LabelServiceName] = "api-abc", "api"
			objs = append(objs, api, slice)
			targets = append(targets, syncer.Target{Service: api, Namespace: "shop", Name: "api"})
		}
		c := client(nil)
		for _, o := range append(objs, dnsPod("dns-a")) {
			if err := c.Tracker().Add(o); err != nil {
				t.Fatal(err)
			}
		}
		var lists, reviews atomic.Int32
		c.PrependReactor("list", "endpointslices", func(k8stesting.Action) (bool, runtime.Object, error) {
			lists.Add(1)
			return false, nil, nil
		})
		c.PrependReactor("create", "selfsubjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
			reviews.Add(1)
			return false, nil, nil
		})
		calls := 0
		o := options(c, fakeTransport{})
		o.Readers[proxyread.ModeNftables] = lateReader{&calls}
		rep, err := Run{Options: o, Settle: true, SyncPeriod: 10 * time.Millisecond, Domain: "cluster.local"}.Report(context.Background(), targets, false)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 || len(rep.Services) != services || rep.Services[0].Plan != verdict.PlanAgrees {
			t.Fatalf("%d Services: %d rounds, services %+v; want a drift settled in a second round", services, calls, rep.Services)
		}
		if lists.Load() != 2 || reviews.Load() != 3 {
			t.Errorf("%d Services, two rounds: %d lists of the slices (want 2, one a round), %d access reviews (want 3, one a tier, once)", services, lists.Load(), reviews.Load())
		}
	}
}

// A Service whose plan cannot be read (its Pods may not be listed) leaves
// no slices to judge: the round is an error, not a verdict, and it names
// the Service only when the read was that Service's alone, since for
// several the read is one fill that every outcome shares.
func TestAFailedReadOfThePlanIsTheRoundsError(t *testing.T) {
	for _, services := range []int{1, 2} {
		svc, objs := webObjects()
		targets := []syncer.Target{{Service: svc, Namespace: "shop", Name: "web"}}
		if services == 2 {
			api := svc.DeepCopy()
			api.Namespace = "ops"
			objs = append(objs, api)
			targets = append(targets, syncer.Target{Service: api, Namespace: "ops", Name: "web"})
		}
		c := client(nil, objs...)
		c.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("may not list pods"))
		})
		_, err := Run{Options: options(c, fakeTransport{}), SyncPeriod: time.Second, Domain: "cluster.local"}.Report(context.Background(), targets, false)
		var re *ReadError
		if !errors.As(err, &re) || !apierrors.IsForbidden(re.Err) {
			t.Fatalf("%d Services: %v, want a ReadError that is the forbidden list", services, err)
		}
		if named := re.Namespace != "" || re.Name != ""; named != (services == 1) {
			t.Errorf("%d Services: the error names %s/%s", services, re.Namespace, re.Name)
		}
	}
}

// --node reads the nodes it names alone; a name that is no node fails
// the run before any Service is read.
func TestOnlyNodes(t *testing.T) {
	svc, objs := webObjects()
	kpB := proxyPodOn("kp-b", "n-b", map[string]string{"k8s-app": "kube-proxy"}, corev1.PodRunning)
	c := client(nil)
	for _, o := range append(objs, kpB, readyNode("n-b")) {
		if err := c.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	targets := []syncer.Target{{Service: svc, Namespace: "shop", Name: "web"}}
	for _, only := range [][]string{nil, {"n-b"}} {
		calls := 0
		o := options(c, fakeTransport{})
		o.Readers[proxyread.ModeNftables] = lateReader{&calls}
		rep, err := Run{Options: o, SyncPeriod: time.Second, OnlyNodes: only}.Report(context.Background(), targets, false)
		var got []string
		for _, n := range rep.Nodes {
			got = append(got, n.Node)
		}
		want := []string{"n-a", "n-b"}
		if only != nil {
			want = only
		}
		if err != nil || !slices.Equal(got, want) || calls != len(want) {
			t.Errorf("--node %v: nodes %v read %d times (%v); want %v", only, got, calls, err, want)
		}
	}
	c.ClearActions()
	_, err := Run{Options: options(c, fakeTransport{}), SyncPeriod: time.Second, OnlyNodes: []string{"n-a", "n-x"}}.Report(context.Background(), targets, false)
	var nf *NodeNotFoundError
	if !errors.As(err, &nf) || nf.Name != "n-x" {
		t.Fatalf("--node n-a,n-x: %v; want n-x not found", err)
	}
	for _, a := range c.Actions() {
		if a.GetResource().Resource != "nodes" {
			t.Errorf("a name that is no node, yet %s %s was read", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
