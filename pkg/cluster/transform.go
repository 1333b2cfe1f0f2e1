package cluster

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// Transform keeps of each cached object only what the planner and explain
// read, so that a cache of 20,000 Pods stays small. It is the informers'
// transform and is applied to every listed item of a one-shot fill alike.
// Pods become PodRecords and Nodes are rebuilt as new, small objects (so
// nothing keeps the decoded list's backing array alive); Services and
// slices only lose their managedFields and the last-applied annotation,
// since the planner copies their labels and slice annotations, and slices
// share their endpoints' repeated values (intern.go); Endpoints likewise,
// as the mirror planner copies them whole. Objects it does not know pass
// through.
func Transform(obj any) (any, error) { return transform(obj, "") }

// TransformKeeping is Transform, except that Endpoints objects marked with
// managedBy (ours, written by sync --watch --with-endpoints) keep their
// addresses: the loop compares them with the Pods on every sync, and a
// slimmed copy would look out of date every time.
func TransformKeeping(managedBy string) func(any) (any, error) {
	return func(obj any) (any, error) { return transform(obj, managedBy) }
}

func transform(obj any, keep string) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return slimPod(o), nil
	case *corev1.Node:
		return slimNode(o), nil
	case *corev1.Service:
		o.ManagedFields = nil
		delete(o.Annotations, corev1.LastAppliedConfigAnnotation)
		return o, nil
	case *corev1.Endpoints:
		if by := o.Labels[endpoints.LabelManagedBy]; by != "" && by != keep {
			return slimEndpoints(o), nil
		}
		// The mirror planner copies labels, annotations (but not this one)
		// and subsets.
		o.ManagedFields = nil
		delete(o.Annotations, corev1.LastAppliedConfigAnnotation)
		return o, nil
	case *discovery.EndpointSlice:
		o.ManagedFields = nil
		delete(o.Annotations, corev1.LastAppliedConfigAnnotation)
		o.Endpoints = endpointSlices.endpoints(o.Endpoints)
		return o, nil
	}
	return obj, nil
}

// SlimmedAnnotation marks a cached Endpoints object Transform emptied;
// Cache.EndpointsOf reads such an object from the API server instead.
const SlimmedAnnotation = "kubectl-slices.io/slimmed"

// slimEndpoints keeps of an Endpoints object a controller wrote (it carries
// endpoints.kubernetes.io/managed-by: upstream's Endpoints controller, or
// sync --with-endpoints) only its identity and labels. Such objects belong
// to Services with a selector, which are planned from their Pods, not
// mirrored; they hold every Pod's address and are most of the Endpoints
// cache (bench: BenchmarkWatchEndpointsMemory). Should the Service lose its
// selector, the mirror planner needs the whole object: EndpointsOf GETs it.
func slimEndpoints(ep *corev1.Endpoints) *corev1.Endpoints {
	out := &corev1.Endpoints{ObjectMeta: slimMeta(ep.ObjectMeta)}
	out.Annotations = map[string]string{SlimmedAnnotation: "true"}
	return out
}

// slimMeta keeps identity, labels and deletion.
func slimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp, Labels: m.Labels}
}

// slimPod keeps what decides whether and how a Pod is an endpoint: phase,
// IPs, the Ready condition (with its transition time, the trigger time),
// node, hostname and subdomain, and the container ports named target ports
// resolve against, including restartable (sidecar) init containers, in a
// PodRecord. What Pods of one workload have in common is shared between
// them (intern.go): the cache holds every Pod of the scope.
func slimPod(p *corev1.Pod) *PodRecord {
	out := &PodRecord{ObjectMeta: slimMeta(p.ObjectMeta)}
	out.Namespace = pods.str(p.Namespace)
	if b := pods.labelSet(p.Labels); b != nil {
		out.Labels, out.labelsRef = b.m, b
	}
	// The controller reference only: the admission webhook tells the
	// workloads a selector matches apart by it (a pointer into the
	// original's slice would keep the whole list alive).
	if ref := metav1.GetControllerOf(p); ref != nil {
		out.OwnerReferences = pods.owner(*ref)
	}
	out.NodeName, out.Hostname, out.Subdomain = pods.str(p.Spec.NodeName), p.Spec.Hostname, pods.str(p.Spec.Subdomain)
	var cs []corev1.Container
	for _, c := range p.Spec.Containers {
		if len(c.Ports) > 0 {
			cs = append(cs, corev1.Container{Name: c.Name, Ports: c.Ports})
		}
	}
	out.Containers = pods.containerPorts(cs)
	cs = nil
	for _, c := range p.Spec.InitContainers {
		if len(c.Ports) > 0 {
			cs = append(cs, corev1.Container{Name: c.Name, Ports: c.Ports, RestartPolicy: c.RestartPolicy})
		}
	}
	out.InitContainers = pods.containerPorts(cs)
	out.Phase, out.PodIP, out.PodIPs = corev1.PodPhase(pods.str(string(p.Status.Phase))), p.Status.PodIP, p.Status.PodIPs
	if len(p.Status.PodIPs) > 0 && p.Status.PodIPs[0].IP == p.Status.PodIP {
		// one string for both: decoding made two
		out.PodIPs[0].IP = p.Status.PodIP
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Conditions = pods.condition([]corev1.PodCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime}})
		}
	}
	return out
}

// slimNode keeps the zone label (and the others hints exclude by), the
// Ready condition and allocatable CPU, which topology-mode: Auto weighs.
func slimNode(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{ObjectMeta: slimMeta(n.ObjectMeta)}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	if cpu, ok := n.Status.Allocatable[corev1.ResourceCPU]; ok {
		out.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: cpu}
	}
	return out
}
