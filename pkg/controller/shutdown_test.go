package controller

import (
	"bytes"
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// After the signal, a worker finishes the Service in hand but starts no
// other: the queue may still hold thousands of keys (a fresh start queues
// every Service), and workqueue's Get keeps handing them out after ShutDown.
func TestNoNewSyncAfterSignal(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "svc-uid"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	client := fake.NewClientset()
	var out bytes.Buffer
	c := New(client, Options{
		Plan:   reconcile.Options{ManagedBy: "kubectl-slices", MaxEndpointsPerSlice: 100},
		Write:  apply.Options{ManagedBy: "kubectl-slices", DryRun: apply.DryRunNone},
		Report: NewReporter(&out, false),
	})
	ns := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	c.cache.Services, c.cache.Pods = cache.NewIndexer(cache.MetaNamespaceKeyFunc, ns), cache.NewIndexer(cache.MetaNamespaceKeyFunc, ns)
	c.cache.Slices = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"service": func(any) ([]string, error) { return nil, nil }})
	c.cache.NodesUnreadable = true
	_ = c.cache.Services.Add(svc)
	_ = c.cache.Pods.Add(pod)

	c.queue.Add("shop/web")
	c.queue.ShutDown()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	go func() {
		for c.processNext(ctx) {
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not stop")
	}
	for _, a := range client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" {
			t.Errorf("after the signal a queued Service was synced: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
