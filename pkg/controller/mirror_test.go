package controller

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

const testNS = "ns"

// service is a Service with one port, selecting by selector (nil: none).
func service(name string, selector map[string]string) *corev1.Service {
	b := testutil.NewService(testNS, name).Port("http", 80, "80")
	for k, v := range selector {
		b.Selector(k, v)
	}
	return b.Build()
}

// endpointsObj is an Endpoints object with one subset on port http.
func endpointsObj(name string, ready string, notReady ...string) *corev1.Endpoints {
	return testutil.NewEndpoints(testNS, name).UID("uid-"+name).Addresses("http", 8080, []string{ready}, notReady...).Build()
}

// newController builds a Controller on a cache and informers of client, as
// the process assembly does; the informers are not started.
func newController(t *testing.T, client *fake.Clientset, opts Options) *Controller {
	t.Helper()
	cc := cluster.NewCache(client, opts.Namespace)
	infs, err := cc.Informers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(client, cc, infs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// started builds a Controller on a fake clientset, with RBAC answering
// allowed(resource) and the informers started and synced, as Run does.
func started(t *testing.T, allowed func(resource string) bool, objs ...runtime.Object) (*Controller, *fake.Clientset, *bytes.Buffer) {
	t.Helper()
	return startedWith(t, allowed, func(*Options) {}, objs...)
}

// startedWith is started with options changed by tune.
func startedWith(t *testing.T, allowed func(resource string) bool, tune func(*Options), objs ...runtime.Object) (*Controller, *fake.Clientset, *bytes.Buffer) {
	t.Helper()
	client := fake.NewClientset(objs...)
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = allowed(r.Spec.ResourceAttributes.Resource)
		return true, r, nil
	})
	// The fake clientset neither honours generateName nor sets UIDs (which
	// the stale-cache guard tracks).
	n := 0
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice); s.Name == "" {
			n++
			s.Name = fmt.Sprintf("%s%d", s.GenerateName, n)
			s.UID = types.UID(s.Name)
		}
		return false, nil, nil
	})
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Namespace: testNS, Plan: reconcile.Options{ManagedBy: "test-manager", MaxEndpointsPerSlice: reconcile.DefaultMaxEndpointsPerSlice},
		Write: apply.Options{ManagedBy: "test-manager", FieldManager: "test"}, Report: NewReporter(&out, &out, false)}
	tune(&opts)
	c := newController(t, client, opts)
	c.infs.Start(ctx.Done())
	t.Cleanup(c.infs.Shutdown)
	t.Cleanup(cancel) // runs first: Shutdown waits for the informers to stop
	if !c.infs.WaitForSync(ctx) {
		t.Fatal("caches did not sync")
	}
	return c, client, &out
}

// drain empties the queue, returning the keys it held.
func drain(c *Controller) []string {
	var keys []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		keys = append(keys, k)
		c.queue.Done(k)
		c.queue.Forget(k)
	}
	return keys
}

func everything(string) bool { return true }

// An Endpoints event queues the Service of the same name only when that
// Service is selectorless: Endpoints of selector Services and Endpoints
// without a Service queue nothing.
func TestEndpointsEventsQueueSelectorlessService(t *testing.T) {
	c, client, _ := started(t, everything,
		service("mirrored", nil), service("selected", map[string]string{"app": "a"}),
		endpointsObj("mirrored", "10.0.0.1"), endpointsObj("selected", "10.0.0.2"), endpointsObj("orphan", "10.0.0.3"))
	drain(c)
	ctx := context.Background()
	eps := client.CoreV1().Endpoints(testNS)
	// Changes that must queue nothing, then one that must: the informer
	// delivers them in order, so when the last is queued the others were
	// handled.
	for _, ep := range []*corev1.Endpoints{endpointsObj("selected", "10.0.0.9"), endpointsObj("orphan", "10.0.0.9")} {
		if _, err := eps.Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eps.Update(ctx, endpointsObj("mirrored", "10.0.0.9"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, c, []string{"ns/mirrored"})
	if err := eps.Delete(ctx, "selected", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := eps.Delete(ctx, "mirrored", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, c, []string{"ns/mirrored"})
	if _, err := eps.Create(ctx, endpointsObj("mirrored", "10.0.0.1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, c, []string{"ns/mirrored"})
}

func waitQueued(t *testing.T, c *Controller, want []string) {
	t.Helper()
	var got []string
	_ = wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		got = append(got, drain(c)...)
		return len(got) >= len(want), nil
	})
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("queued %v, want %v", got, want)
	}
}

// oursIn lists the addresses (ready or not) of our slices in the fake
// clientset, the end state the sync wrote.
func oursIn(t *testing.T, client *fake.Clientset) []string {
	t.Helper()
	list, err := client.DiscoveryV1().EndpointSlices(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		if s.Labels[discovery.LabelManagedBy] != "test-manager" {
			continue
		}
		for _, e := range s.Endpoints {
			ready := e.Conditions.Ready != nil && *e.Conditions.Ready
			out = append(out, e.Addresses[0]+map[bool]string{true: "+", false: "-"}[ready])
		}
	}
	return out
}

// syncUntil syncs a Service until the stale-cache guard lets it through.
func syncUntil(t *testing.T, c *Controller, key string) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		last = c.sync(ctx, key)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("sync %s: %v", key, last)
	}
}

// The watch path mirrors a selectorless Service from the cached Endpoints,
// with no Endpoints GET, and deletes the mirrored slice once the Endpoints
// object is gone.
func TestSyncMirrorsFromCachedEndpoints(t *testing.T) {
	c, client, out := started(t, everything, service("mirrored", nil), endpointsObj("mirrored", "10.0.0.1", "10.0.0.2"))
	syncUntil(t, c, "ns/mirrored")
	if got := strings.Join(oursIn(t, client), ","); got != "10.0.0.1+,10.0.0.2-" {
		t.Fatalf("mirrored %q, want 10.0.0.1+,10.0.0.2-", got)
	}
	for _, a := range client.Actions() {
		if a.GetResource().Resource == "endpoints" && a.GetVerb() == "get" {
			t.Fatalf("the watch path read Endpoints from the API: %v", a)
		}
	}
	if err := client.CoreV1().Endpoints(testNS).Delete(context.Background(), "mirrored", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		ep, err := c.cache.EndpointsOf(ctx, testNS, "mirrored")
		return ep == nil && err == nil, nil
	})
	if err != nil {
		t.Fatal("the cache kept the deleted Endpoints")
	}
	syncUntil(t, c, "ns/mirrored")
	if got := oursIn(t, client); len(got) != 0 {
		t.Fatalf("mirrored slice left after its Endpoints was deleted: %v\n%s", got, out)
	}
}

// Without the right to watch Endpoints the controller says so once and
// syncs on, mirroring nothing.
func TestEndpointsUnreadable(t *testing.T) {
	c, client, _ := started(t, func(r string) bool { return r != "endpoints" },
		service("mirrored", nil), endpointsObj("mirrored", "10.0.0.1"))
	if !c.cache.EndpointsUnreadable {
		t.Fatal("Endpoints not marked unreadable")
	}
	syncUntil(t, c, "ns/mirrored")
	if got := oursIn(t, client); len(got) != 0 {
		t.Fatalf("mirrored without the right to read Endpoints: %v", got)
	}
}

// allowAll answers every SelfSubjectAccessReview with allowed.
func allowAll(a k8stesting.Action) (bool, runtime.Object, error) {
	r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
	r.Status.Allowed = true
	return true, r, nil
}
