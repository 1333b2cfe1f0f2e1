package cluster

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// The transform keeps everything the planner reads: plans made from
// transformed objects equal plans made from the originals, for Pods that
// exercise every field it reads.
func TestTransformKeepsWhatThePlannerReads(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	always := corev1.ContainerRestartPolicyAlways
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u",
		Annotations: map[string]string{corev1.AnnotationTopologyMode: "Auto"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "None", PublishNotReadyAddresses: false,
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
				{Name: "side", Port: 90, TargetPort: intstr.FromString("side"), Protocol: corev1.ProtocolTCP}}}}
	pod := func(name, node, ip string, mod func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"},
				Annotations: map[string]string{"big": "x"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
			Spec: corev1.PodSpec{NodeName: node, Hostname: name, Subdomain: "web",
				Containers: []corev1.Container{{Name: "app", Image: "img", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}},
					{Name: "noports", Image: "img"}},
				InitContainers: []corev1.Container{{Name: "side", RestartPolicy: &always, Ports: []corev1.ContainerPort{{Name: "side", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}},
					{Name: "init", Ports: []corev1.ContainerPort{{Name: "side", ContainerPort: 1, Protocol: corev1.ProtocolTCP}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}, {IP: "fd00::" + name}},
				Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}},
		}
		if mod != nil {
			mod(p)
		}
		return p
	}
	pods := []*corev1.Pod{
		pod("a", "n1", "10.0.0.1", nil),
		pod("b", "n2", "10.0.0.2", func(p *corev1.Pod) { p.Status.Conditions[1].Status = corev1.ConditionFalse }),
		pod("c", "n1", "10.0.0.3", func(p *corev1.Pod) { p.DeletionTimestamp = &now }),
		pod("d", "n3", "10.0.0.4", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
		pod("e", "gone", "10.0.0.5", nil),
	}
	node := func(name, zone, cpu string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				Images:     []corev1.ContainerImage{{Names: []string{"big"}}}}}
	}
	nodes := reconcile.Nodes{ByName: map[string]*corev1.Node{"n1": node("n1", "z1", "4"), "n2": node("n2", "z2", "8"), "n3": node("n3", "z2", "2")}, Complete: true}

	plan := func(pods []*corev1.Pod, nodes reconcile.Nodes) []*discovery.EndpointSlice {
		p, err := reconcile.Compute(reconcile.Input{Service: svc, Pods: pods, Nodes: nodes}, reconcile.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		return p.Final()
	}
	want := plan(pods, nodes)
	var slimPods []*corev1.Pod
	for _, p := range pods {
		got, _ := Transform(p.DeepCopy())
		slimPods = append(slimPods, PodOf(got))
		if len(PodOf(got).Annotations) != 0 || len(PodOf(got).ManagedFields) != 0 {
			t.Error("annotations or managedFields kept")
		}
	}
	slimNodes := reconcile.Nodes{ByName: map[string]*corev1.Node{}, Complete: true}
	for name, n := range nodes.ByName {
		got, _ := Transform(n.DeepCopy())
		slimNodes.ByName[name] = got.(*corev1.Node)
		// topology-mode: Auto weighs zones by allocatable CPU; too few
		// endpoints here for it to allocate hints, so check it directly.
		if !got.(*corev1.Node).Status.Allocatable.Cpu().Equal(*n.Status.Allocatable.Cpu()) {
			t.Errorf("node %s: allocatable CPU lost", name)
		}
	}
	if got := plan(slimPods, slimNodes); !reflect.DeepEqual(got, want) {
		t.Fatalf("plans differ after the transform:\n got %+v\nwant %+v", got, want)
	}
}
