package controller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
)

// After the signal, a worker finishes the Service in hand but starts no
// other: the queue may still hold thousands of keys (a fresh start queues
// every Service), and workqueue's Get keeps handing them out after ShutDown.
func TestNoNewSyncAfterSignal(t *testing.T) {
	c, _ := testController(t)
	client := fake.NewClientset()
	c.client = client
	c.opts.Write = apply.Options{ManagedBy: "ours", DryRun: apply.DryRunNone}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	_ = c.cache.Pods.Add(cached(pod))

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
