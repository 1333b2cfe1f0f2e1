package controlplane

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// HoldFinalizer keeps deleted Pods around as terminating: there is no
// kubelet to finish them.
const HoldFinalizer = "kubectl-slices.test/hold"

// Namespace creates a namespace and its default ServiceAccount (normally
// made by a controller this control plane does not run).
func (cp *ControlPlane) Namespace(ctx context.Context, name string) error {
	if _, err := cp.Admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := cp.Admin.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	return err
}

// NodeSpec describes a Node to create.
type NodeSpec struct {
	Name, Zone string
	CPU        string // allocatable CPU, e.g. "4"
	NotReady   bool
}

// Node creates a Node and writes its status (allocatable CPU, Ready).
func (cp *ControlPlane) Node(ctx context.Context, s NodeSpec) error {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: map[string]string{"kubernetes.io/hostname": s.Name}}}
	if s.Zone != "" {
		n.Labels[corev1.LabelTopologyZone] = s.Zone
	}
	created, err := cp.Admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	cpu := s.CPU
	if cpu == "" {
		cpu = "4"
	}
	ready := corev1.ConditionTrue
	if s.NotReady {
		ready = corev1.ConditionFalse
	}
	created.Status = corev1.NodeStatus{
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
	}
	_, err = cp.Admin.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// PodSpec describes a Pod as a kubelet would have left it.
type PodSpec struct {
	Name      string
	Labels    map[string]string
	Node      string
	IPs       []string // empty: no IP yet
	Ready     bool
	Phase     corev1.PodPhase // default Running
	Hostname  string
	Subdomain string
	// Ports are the container's ports (for named target ports).
	Ports []corev1.ContainerPort
	// Sidecar ports go on a restartable init container.
	SidecarPorts []corev1.ContainerPort
	// Terminating deletes the Pod after creating it; a finalizer keeps it.
	Terminating bool
}

// Pod creates a Pod bound to its Node and writes its status.
func (cp *ControlPlane) Pod(ctx context.Context, ns string, s PodSpec) (*corev1.Pod, error) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns, Labels: s.Labels},
		Spec: corev1.PodSpec{
			NodeName: s.Node, Hostname: s.Hostname, Subdomain: s.Subdomain,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Ports: s.Ports}},
		},
	}
	if len(s.SidecarPorts) > 0 {
		always := corev1.ContainerRestartPolicyAlways
		p.Spec.InitContainers = []corev1.Container{{Name: "sidecar", Image: "registry.k8s.io/pause:3.10",
			RestartPolicy: &always, Ports: s.SidecarPorts}}
	}
	if s.Terminating {
		p.Finalizers = []string{HoldFinalizer}
	}
	created, err := cp.Admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	created.Status = podStatus(s)
	updated, err := cp.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		return nil, err
	}
	if s.Terminating {
		if err := cp.Admin.CoreV1().Pods(ns).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			return nil, err
		}
		return cp.Admin.CoreV1().Pods(ns).Get(ctx, s.Name, metav1.GetOptions{})
	}
	return updated, nil
}

func podStatus(s PodSpec) corev1.PodStatus {
	st := corev1.PodStatus{Phase: s.Phase, HostIP: "192.0.2.1", HostIPs: []corev1.HostIP{{IP: "192.0.2.1"}}}
	if st.Phase == "" {
		st.Phase = corev1.PodRunning
	}
	for i, ip := range s.IPs {
		if i == 0 {
			st.PodIP = ip
		}
		st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
	}
	ready := corev1.ConditionFalse
	if s.Ready {
		ready = corev1.ConditionTrue
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	st.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: s.Ready, Image: "registry.k8s.io/pause:3.10",
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}
	st.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
	}
	return st
}

// Pods creates many Pods with a few workers in parallel.
func (cp *ControlPlane) Pods(ctx context.Context, ns string, specs []PodSpec, workers int) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	ch := make(chan PodSpec)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range ch {
				if _, err := cp.Pod(ctx, ns, s); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("pod %s: %w", s.Name, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, s := range specs {
		ch <- s
	}
	close(ch)
	wg.Wait()
	return firstErr
}

// SetPodReady rewrites a Pod's Ready condition.
func (cp *ControlPlane) SetPodReady(ctx context.Context, ns, name string, ready bool) error {
	p, err := cp.Admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			p.Status.Conditions[i].Status = status
			p.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	_, err = cp.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// ServicePort is a shorthand for a TCP Service port.
func ServicePort(name string, port int32, target intstr.IntOrString) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: target, Protocol: corev1.ProtocolTCP}
}

// Service creates a Service.
func (cp *ControlPlane) Service(ctx context.Context, svc *corev1.Service) (*corev1.Service, error) {
	return cp.Admin.CoreV1().Services(svc.Namespace).Create(ctx, svc, metav1.CreateOptions{})
}

// Unthrottled is cp with an admin client that has no client-side rate
// limit, to seed large benchmarks quickly (the API server's own limits
// still apply). It shares cp's processes: stop cp, not it.
func (cp *ControlPlane) Unthrottled() (*ControlPlane, error) {
	cfg := rest.CopyConfig(cp.AdminConfig)
	cfg.QPS, cfg.Burst = -1, 0 // a negative QPS: no rate limiter
	admin, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	fast := *cp
	fast.Admin, fast.AdminConfig = admin, cfg
	return &fast, nil
}
