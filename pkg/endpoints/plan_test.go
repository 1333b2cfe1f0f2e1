package endpoints

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

var created = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func svc(mods ...func(*corev1.Service)) *corev1.Service {
	s := testutil.NewService("ns", "web").Label("tier", "front").Selector("app", "web").ClusterIP("10.96.0.1").Port("http", 80, "8080").Build()
	for _, m := range mods {
		m(s)
	}
	return s
}

func pod(i int, ready bool, mods ...func(*corev1.Pod)) *corev1.Pod {
	p := testutil.NewPod("ns", fmt.Sprintf("web-%d", i)).UID("uid").Label("app", "web").Node("n1").
		IP(fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)).Ready(ready).Build()
	for _, m := range mods {
		m(p)
	}
	return p
}

func opts() Options { return Options{ManagedBy: "ours", TriggerTime: created} }

func TestComputeReadyNotReadyTerminating(t *testing.T) {
	terminating := func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: created} }
	pods := []*corev1.Pod{pod(0, true), pod(1, false), pod(2, true, terminating),
		pod(3, true, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })}
	before := []*corev1.Pod{pods[0].DeepCopy(), pods[1].DeepCopy(), pods[2].DeepCopy(), pods[3].DeepCopy()}
	p, err := Compute(Input{Service: svc(), Pods: pods}, opts())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, pods) {
		t.Fatal("input modified")
	}
	if p.Action != Create || p.Ready != 1 || p.NotReady != 1 || len(p.Desired.Subsets) != 1 {
		t.Fatalf("plan %+v", p)
	}
	want := map[string]string{"tier": "front", LabelManagedBy: "ours"}
	if !reflect.DeepEqual(p.Desired.Labels, want) {
		t.Fatalf("labels %v", p.Desired.Labels)
	}
	if got := p.Desired.Annotations[corev1.EndpointsLastChangeTriggerTime]; got != "2024-01-01T00:00:00Z" {
		t.Fatalf("trigger time %q", got)
	}
	// publishNotReadyAddresses: every Pod but the terminal one, all ready.
	p, _ = Compute(Input{Service: svc(func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }), Pods: pods}, opts())
	if p.Ready != 3 || p.NotReady != 0 {
		t.Fatalf("publishNotReadyAddresses: %d ready, %d not ready", p.Ready, p.NotReady)
	}
}

func TestComputeHeadlessHostnameAndNoPorts(t *testing.T) {
	headless := svc(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.Ports = corev1.ClusterIPNone, nil })
	p, _ := Compute(Input{Service: headless, Pods: []*corev1.Pod{
		pod(0, true, func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "a", "web" }),
		pod(1, true, func(p *corev1.Pod) { p.Spec.Hostname = "b" }),
	}}, opts())
	if _, ok := p.Desired.Labels[corev1.IsHeadlessService]; !ok {
		t.Fatal("headless label missing")
	}
	s := p.Desired.Subsets
	if len(s) != 1 || len(s[0].Ports) != 0 || len(s[0].Addresses) != 2 || s[0].Addresses[0].Hostname != "a" || s[0].Addresses[1].Hostname != "" {
		t.Fatalf("subsets %+v", s)
	}
	// Not headless and no ports: no addresses at all.
	p, _ = Compute(Input{Service: svc(func(s *corev1.Service) { s.Spec.Ports = nil }), Pods: []*corev1.Pod{pod(0, true)}}, opts())
	if len(p.Desired.Subsets) != 0 {
		t.Fatalf("subsets %+v", p.Desired.Subsets)
	}
}

func TestComputeTruncatesAt1000(t *testing.T) {
	var pods []*corev1.Pod
	for i := 0; i < 1100; i++ {
		pods = append(pods, pod(i, i%10 != 0))
	}
	p, _ := Compute(Input{Service: svc(), Pods: pods}, opts())
	if !p.Truncated || p.Ready != 990 || p.NotReady != 10 || p.Desired.Annotations[corev1.EndpointsOverCapacity] != Truncated {
		t.Fatalf("truncated=%v ready=%d notReady=%d annotations=%v", p.Truncated, p.Ready, p.NotReady, p.Desired.Annotations)
	}
	// Applied, nothing more to do; below capacity again, the annotation goes.
	live := p.Desired.DeepCopy()
	live.ResourceVersion = "5"
	if again, _ := Compute(Input{Service: svc(), Pods: pods, Live: live}, opts()); again.Action != None {
		t.Fatalf("second plan: %s %s", again.Action, again.Message)
	}
	small, _ := Compute(Input{Service: svc(), Pods: pods[:5], Live: live}, opts())
	if _, ok := small.Desired.Annotations[corev1.EndpointsOverCapacity]; small.Action != Update || ok {
		t.Fatalf("shrunk: %s, annotations %v", small.Action, small.Desired.Annotations)
	}
}

func TestComputeNeverPlansOverSomeoneElses(t *testing.T) {
	for _, labels := range []map[string]string{nil, {LabelManagedBy: ControllerManagedBy}, {LabelManagedBy: "other"}} {
		live := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: labels, ResourceVersion: "1"}}
		p, _ := Compute(Input{Service: svc(), Pods: []*corev1.Pod{pod(0, true)}, Live: live}, opts())
		if p.Action != Skip || p.Desired != nil || p.Message == "" {
			t.Fatalf("labels %v: %+v", labels, p)
		}
	}
	ours := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Labels: map[string]string{LabelManagedBy: "ours"}, ResourceVersion: "1"}}
	if p, _ := Compute(Input{Service: svc(), Pods: []*corev1.Pod{pod(0, true)}, Live: ours}, opts()); p.Action != Update || p.Desired.ResourceVersion != "1" {
		t.Fatalf("ours: %+v", p)
	}
}

func TestRepackNotReadyWinsAndGroupsPorts(t *testing.T) {
	a := corev1.EndpointAddress{IP: "10.0.0.1"}
	b := corev1.EndpointAddress{IP: "10.0.0.2"}
	http := corev1.EndpointPort{Name: "http", Port: 80}
	dns := corev1.EndpointPort{Name: "dns", Port: 53}
	in := []corev1.EndpointSubset{
		{Addresses: []corev1.EndpointAddress{a, b}, Ports: []corev1.EndpointPort{http}},
		{NotReadyAddresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{http}},
		{Addresses: []corev1.EndpointAddress{b}, NotReadyAddresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{dns}},
	}
	got := Repack(in)
	want := []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{b}, NotReadyAddresses: []corev1.EndpointAddress{a}, Ports: []corev1.EndpointPort{dns, http}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// A stale over-capacity annotation on an object that is no longer over
// capacity is removed even when the addresses already match.
func TestComputeRemovesStaleOverCapacity(t *testing.T) {
	p, _ := Compute(Input{Service: svc(), Pods: []*corev1.Pod{pod(0, true)}}, opts())
	live := p.Desired.DeepCopy()
	live.ResourceVersion = "5"
	live.Annotations[corev1.EndpointsOverCapacity] = Truncated
	again, _ := Compute(Input{Service: svc(), Pods: []*corev1.Pod{pod(0, true)}, Live: live}, opts())
	if _, ok := again.Desired.Annotations[corev1.EndpointsOverCapacity]; again.Action != Update || ok {
		t.Fatalf("%s, annotations %v", again.Action, again.Desired.Annotations)
	}
}
