package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// churnRecord is one change the churn made (or tried).
type churnRecord struct {
	Kind opKind
	NS   string
	// Resource, Verb and Name are those of the write that made the change,
	// to find it in the audit log; Sent and Done bracket it.
	Resource, Verb, Name string
	Sent, Done           time.Time
	Err                  string
	// Affected are the Services whose desired endpoints it changed.
	Affected []string
}

// churn applies the model's changes to the cluster at a steady rate, as
// the cluster's admin.
type churn struct {
	client kubernetes.Interface
	model  *model
	rate   float64

	mu      sync.Mutex
	records []churnRecord
	// dirty are objects whose last write's outcome is unknown: read back
	// before the model plans again.
	dirty []dirtyObject
	// removalCheck is when gone namespaces were last looked for.
	removalCheck time.Time
}

type dirtyObject struct{ ns, resource, name string }

// Records are the changes so far.
func (c *churn) Records() []churnRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]churnRecord(nil), c.records...)
}

// run changes the cluster every 1/rate until ctx ends; a change that takes
// longer delays the next (the rate achieved is reported).
func (c *churn) run(ctx context.Context) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.step(ctx)
	}
}

// fill makes changes as fast as the API takes them until the model has
// filled every namespace (the world the soak starts from), at most limit.
func (c *churn) fill(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		filling := false
		for _, n := range c.model.ns {
			filling = filling || n.Removed || n.Filling
		}
		if !filling {
			return nil
		}
		c.step(ctx)
	}
	return fmt.Errorf("the churn's world was not filled within %s", limit)
}

// step plans and makes one change.
func (c *churn) step(ctx context.Context) {
	c.resync(ctx)
	c.checkRemovals(ctx)
	o, ok := c.model.Plan(time.Now())
	if !ok {
		return
	}
	rec := c.apply(ctx, o)
	c.mu.Lock()
	c.records = append(c.records, rec)
	c.mu.Unlock()
}

// apply makes one change and tells the model what happened.
func (c *churn) apply(ctx context.Context, o op) churnRecord {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	resource, name := o.Object()
	rec := churnRecord{Kind: o.Kind, NS: o.NS, Resource: resource, Name: name}
	var err error
	switch o.Kind {
	case opFlip:
		rec.Verb = "update"
		err = c.setReady(ctx, o.Pod, &rec)
	case opRelabel:
		rec.Verb = "patch"
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{appLabel: o.Pod.App, trackLabel: o.Pod.Track}}})
		rec.Sent = time.Now()
		_, err = c.client.CoreV1().Pods(o.NS).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case opScaleUp:
		rec.Verb = "update"
		err = c.createPod(ctx, o.Pod, &rec)
	case opScaleDown:
		rec.Verb = "delete"
		rec.Sent = time.Now()
		err = c.client.CoreV1().Pods(o.NS).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
	case opServiceCreate:
		rec.Verb = "create"
		rec.Sent = time.Now()
		_, err = c.client.CoreV1().Services(o.NS).Create(ctx, serviceObject(o.Service), metav1.CreateOptions{})
	case opServiceDelete:
		rec.Verb = "delete"
		rec.Sent = time.Now()
		err = c.client.CoreV1().Services(o.NS).Delete(ctx, name, metav1.DeleteOptions{})
	case opSelectorSwitch:
		rec.Verb = "patch"
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"selector": map[string]string{appLabel: o.Service.Name, trackLabel: o.Service.Track}}})
		rec.Sent = time.Now()
		_, err = c.client.CoreV1().Services(o.NS).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	case opNSDelete:
		rec.Verb = "delete"
		rec.Sent = time.Now()
		err = c.client.CoreV1().Namespaces().Delete(ctx, o.NS, metav1.DeleteOptions{})
	case opNSCreate:
		rec.Verb = "create"
		rec.Sent = time.Now()
		err = c.createNamespace(ctx, o.NS)
	}
	rec.Done = time.Now()
	now := rec.Done
	switch {
	case err == nil:
		rec.Affected = c.model.Applied(o, now)
	case o.Kind == opNSCreate && apierrors.IsAlreadyExists(err):
		// Still terminating: looked for again later.
		c.model.Unremoved(o.NS)
	case o.Kind == opNSDelete && apierrors.IsNotFound(err):
		rec.Affected = c.model.Applied(o, now)
	case o.Kind == opNSCreate || o.Kind == opNSDelete:
	case apierrors.IsNotFound(err):
		c.model.Forget(o.NS, resource, name)
	default:
		// A conflict, a timeout, the API server down: what the object is
		// now is read back before the next plan.
		c.mu.Lock()
		c.dirty = append(c.dirty, dirtyObject{o.NS, resource, name})
		c.mu.Unlock()
	}
	if err != nil {
		rec.Err = err.Error()
	}
	return rec
}

// setReady rewrites a Pod's readiness, as a kubelet's probe would.
func (c *churn) setReady(ctx context.Context, p pod, rec *churnRecord) error {
	cur, err := c.client.CoreV1().Pods(p.NS).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Status = podStatus(p)
	rec.Sent = time.Now()
	_, err = c.client.CoreV1().Pods(p.NS).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

// createPod creates a Pod bound to its Node, then writes its status (its
// address and readiness) as a kubelet would: the status is the change.
func (c *churn) createPod(ctx context.Context, p pod, rec *churnRecord) error {
	obj := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.NS, Labels: map[string]string{appLabel: p.App, trackLabel: p.Track}},
		Spec: corev1.PodSpec{NodeName: p.Node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
	}
	created, err := c.client.CoreV1().Pods(p.NS).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Status = podStatus(p)
	rec.Sent = time.Now()
	_, err = c.client.CoreV1().Pods(p.NS).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// podStatus is a running Pod's status with its address and readiness.
func podStatus(p pod) corev1.PodStatus {
	ready := corev1.ConditionFalse
	if p.Ready {
		ready = corev1.ConditionTrue
	}
	now := metav1.Now()
	return corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "192.0.2.1", HostIPs: []corev1.HostIP{{IP: "192.0.2.1"}},
		PodIP: p.IP, PodIPs: []corev1.PodIP{{IP: p.IP}},
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: p.Ready, Image: "registry.k8s.io/pause:3.10",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}},
	}
}

// serviceObject is a ClusterIP Service of one port, named http, to the
// Pods' port of that name.
func serviceObject(s service) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.NS},
		Spec: corev1.ServiceSpec{Selector: map[string]string{appLabel: s.Name, trackLabel: s.Track},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}},
	}
}

// createNamespace creates a namespace and its default ServiceAccount
// (which Pods need, and no controller here makes).
func (c *churn) createNamespace(ctx context.Context, ns string) error {
	if _, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := c.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	return err
}

// resync reads back the objects whose last write's outcome is unknown and
// tells the model what they are.
func (c *churn) resync(ctx context.Context) {
	c.mu.Lock()
	dirty := c.dirty
	c.dirty = nil
	c.mu.Unlock()
	var still []dirtyObject
	for _, d := range dirty {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var err error
		if d.resource == "pods" {
			var p *corev1.Pod
			if p, err = c.client.CoreV1().Pods(d.ns).Get(ctx, d.name, metav1.GetOptions{}); err == nil {
				c.model.LearnPod(pod{NS: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, IP: p.Status.PodIP,
					App: p.Labels[appLabel], Track: p.Labels[trackLabel], Ready: podReady(p)})
			}
		} else {
			var s *corev1.Service
			if s, err = c.client.CoreV1().Services(d.ns).Get(ctx, d.name, metav1.GetOptions{}); err == nil {
				c.model.LearnService(service{NS: s.Namespace, Name: s.Name, Track: s.Spec.Selector[trackLabel]})
			}
		}
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			c.model.Forget(d.ns, d.resource, d.name)
		case err != nil:
			still = append(still, d)
		}
	}
	c.mu.Lock()
	c.dirty = append(still, c.dirty...)
	c.mu.Unlock()
}

// checkRemovals looks, at most every 2 s, whether deleted namespaces are
// gone from the API (the namespace controller, in kube-controller-manager,
// empties and removes them), so the model may create them again. It also
// stands in for the kubelet: the namespace controller deletes Pods with
// their grace period, and without a kubelet to confirm that their
// containers stopped (a delete with no grace) they would stay terminating,
// and the namespace with them, for ever.
func (c *churn) checkRemovals(ctx context.Context) {
	if time.Since(c.removalCheck) < 2*time.Second {
		return
	}
	c.removalCheck = time.Now()
	for _, n := range c.model.ns {
		if !n.Gone || n.Removed {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.client.CoreV1().Namespaces().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			c.model.Removed(n.Name)
		} else if pods, err := c.client.CoreV1().Pods(n.Name).List(ctx, metav1.ListOptions{}); err == nil {
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					_ = c.client.CoreV1().Pods(n.Name).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
				}
			}
		}
		cancel()
	}
}
