package upstreamdiff

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/controller/endpoint"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// TestEndpointsMatchUpstream feeds random selector Services and Pods to
// pkg/endpoints and to kube-controller-manager's Endpoints controller and
// requires the same object: subsets compared as sets, labels but the
// managed-by value, the over-capacity annotation, and a trigger time.
func TestEndpointsMatchUpstream(t *testing.T) {
	for i := 0; i < *cases; i++ {
		s := *seed + int64(i)
		t.Run(fmt.Sprintf("seed-%d", s), func(t *testing.T) {
			r := rand.New(rand.NewSource(s))
			svc, pods := randomEndpointsInput(r, i)
			upstream := upstreamEndpoints(t, svc, pods)
			var before []*corev1.Pod
			for _, p := range pods {
				before = append(before, p.DeepCopy())
			}
			plan, err := endpoints.Compute(endpoints.Input{Service: svc, Pods: matching(svc, pods)},
				endpoints.Options{ManagedBy: "ours", TriggerTime: svc.CreationTimestamp.Time})
			if err != nil {
				t.Fatal(err)
			}
			if !equalObjects(before, pods) {
				t.Fatal("endpoints.Compute modified its input")
			}
			got := canonicalEndpoints(plan.Desired, "ours")
			if want := converge(got, upstream, never); got != want {
				t.Fatalf("Endpoints differ\n--- ours\n%s--- upstream\n%s", got, want)
			}
		})
	}
}

func upstreamEndpoints(t *testing.T, svc *corev1.Service, pods []*corev1.Pod) func() string {
	ctx := withTimeout(t)
	// The fake's tracker may stamp what it is given: give it copies.
	objs := []runtime.Object{svc.DeepCopy()}
	for _, p := range pods {
		objs = append(objs, p.DeepCopy())
	}
	client, factory := fakeCluster(objs...)
	c := endpoint.NewEndpointController(ctx, factory.Core().V1().Pods(), factory.Core().V1().Services(),
		factory.Core().V1().Endpoints(), client, 0)
	factory.Start(ctx.Done())
	go c.Run(ctx, 1)
	return func() string {
		ep, err := client.CoreV1().Endpoints(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return canonicalEndpoints(ep, endpoint.ControllerName)
	}
}

// matching is what sync reads: the Pods the selector matches.
func matching(svc *corev1.Service, pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		ok := len(svc.Spec.Selector) > 0
		for k, v := range svc.Spec.Selector {
			if p.Labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// canonicalEndpoints prints an Endpoints object with its subsets as sets:
// one line per (address, readiness, port). With more than 1000 addresses
// in several subsets, upstream's truncation depends on a hash order of the
// subsets, so only the counts per readiness are printed then.
func canonicalEndpoints(ep *corev1.Endpoints, managedBy string) string {
	if ep == nil {
		return ""
	}
	var b strings.Builder
	labels := labelsText(ep.Labels, endpoints.LabelManagedBy, managedBy)
	_, trigger := ep.Annotations[corev1.EndpointsLastChangeTriggerTime]
	fmt.Fprintf(&b, "labels %s\ntrigger-time %v over-capacity=%q\n", labels, trigger, ep.Annotations[corev1.EndpointsOverCapacity])
	var lines []string
	ready, notReady := 0, 0
	for _, s := range ep.Subsets {
		ready += len(s.Addresses)
		notReady += len(s.NotReadyAddresses)
		ports := []string{"<none>"}
		if len(s.Ports) > 0 {
			ports = nil
		}
		for _, p := range s.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d/%s/%s", p.Name, p.Port, p.Protocol, deref(p.AppProtocol)))
		}
		for _, list := range []struct {
			a []corev1.EndpointAddress
			r bool
		}{{s.Addresses, true}, {s.NotReadyAddresses, false}} {
			for _, a := range list.a {
				ref := "-"
				if a.TargetRef != nil {
					ref = fmt.Sprintf("%s/%s/%s/%s", a.TargetRef.Kind, a.TargetRef.Namespace, a.TargetRef.Name, a.TargetRef.UID)
				}
				for _, p := range ports {
					lines = append(lines, fmt.Sprintf("  %s ready=%v host=%q node=%s ref=%s port=%s\n", a.IP, list.r, a.Hostname, deref(a.NodeName), ref, p))
				}
			}
		}
	}
	fmt.Fprintf(&b, "%d ready, %d not ready addresses\n", ready, notReady)
	if ep.Annotations[corev1.EndpointsOverCapacity] != "" && len(ep.Subsets) > 1 {
		return b.String()
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, ""))
	return b.String()
}

// randomEndpointsInput builds a selector Service (ports by number and by
// name, headless or not, one or two families, publishNotReadyAddresses)
// and Pods: ready, not ready, terminating, terminal, without IP, of either
// or both families, with and without the named port, hostname and
// subdomain, some not matching the selector, and now and then over 1000.
func randomEndpointsInput(r *rand.Rand, i int) (*corev1.Service, []*corev1.Pod) {
	name := fmt.Sprintf("svc-%d", i)
	pick := func(p float64) bool { return r.Float64() < p }
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)), Labels: map[string]string{}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, ClusterIP: "10.96.0.10",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, PublishNotReadyAddresses: pick(0.2)}}
	if pick(0.5) {
		svc.Labels["tier"] = "web"
	}
	if pick(0.1) {
		svc.Labels[corev1.IsHeadlessService] = ""
	}
	switch r.Intn(4) {
	case 0:
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	case 1:
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
		svc.Spec.ClusterIP = "fd00:96::10"
	}
	allPorts := []corev1.ServicePort{
		{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP},
		{Name: "named", Port: 81, TargetPort: intstr.FromString("web"), Protocol: corev1.ProtocolTCP, AppProtocol: ptr("http")},
		{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(53), Protocol: corev1.ProtocolUDP},
	}
	n := r.Intn(4)
	if n == 0 && svc.Spec.ClusterIP != corev1.ClusterIPNone && pick(0.5) {
		n = 1
	}
	for _, j := range r.Perm(len(allPorts))[:n] {
		svc.Spec.Ports = append(svc.Spec.Ports, allPorts[j])
	}
	if len(svc.Spec.Ports) == 1 {
		svc.Spec.Ports[0].Name = ""
	}
	count := r.Intn(12)
	big := pick(0.1)
	if big {
		count = 1000 + r.Intn(150)
	}
	var pods []*corev1.Pod
	for p := 0; p < count; p++ {
		pods = append(pods, randomPod(r, svc, p, big))
	}
	return svc, pods
}

func randomPod(r *rand.Rand, svc *corev1.Service, p int, big bool) *corev1.Pod {
	pick := func(x float64) bool { return r.Float64() < x }
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-pod-%d", svc.Name, p),
		UID: types.UID(fmt.Sprintf("%s-uid-%d", svc.Name, p)), Labels: map[string]string{"app": svc.Name}},
		Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", p%3), Containers: []corev1.Container{{Name: "c"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	v4, v6 := fmt.Sprintf("10.1.%d.%d", p/250, p%250+1), fmt.Sprintf("fd00:1::%x", p+1)
	switch k := r.Intn(10); {
	case big || k < 5:
		pod.Status.PodIPs = []corev1.PodIP{{IP: v4}}
	case k < 7:
		pod.Status.PodIPs = []corev1.PodIP{{IP: v4}, {IP: v6}}
	case k < 9:
		pod.Status.PodIPs = []corev1.PodIP{{IP: v6}}
	}
	if len(pod.Status.PodIPs) > 0 {
		pod.Status.PodIP = pod.Status.PodIPs[0].IP
	}
	ready := pick(0.7)
	if big {
		ready = p%4 != 0
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	if big {
		// Some Pods have the named port: two subsets of odd sizes to truncate.
		if r.Intn(3) == 0 {
			pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}}
		}
		return pod
	}
	if pick(0.1) {
		pod.DeletionTimestamp = &metav1.Time{Time: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}
	}
	if pick(0.08) {
		pod.Status.Phase = corev1.PodSucceeded
	}
	if pick(0.6) {
		pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "web", ContainerPort: int32(9000 + r.Intn(2)), Protocol: corev1.ProtocolTCP}}
	}
	if pick(0.3) {
		pod.Spec.Hostname = fmt.Sprintf("h%d", p)
		if pick(0.7) {
			pod.Spec.Subdomain = svc.Name
		}
	}
	if pick(0.1) {
		pod.Labels["app"] = "other"
	}
	if pick(0.05) {
		pod.Spec.NodeName = ""
	}
	return pod
}
