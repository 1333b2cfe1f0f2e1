package cluster

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// The namespace's Pods are read only when the selector matches none.
func TestLoadNearMisses(t *testing.T) {
	ctx := context.Background()
	web := testutil.NewService("shop", "web").Selector("app", "web").Port("http", 80, "8080").Build()
	bare := testutil.NewService("shop", "bare").Port("http", 80, "8080").Build()
	bare.Spec.Selector = nil
	other := testutil.NewPod("shop", "other").Label("app", "webb").IP("10.0.0.2").Build()
	match := testutil.NewPod("shop", "web-1").Label("app", "web").IP("10.0.0.1").Build()
	for _, c := range []struct {
		name   string
		svc    *corev1.Service
		pods   []runtime.Object
		nsPods int
	}{
		{"a Pod matches", web, []runtime.Object{match, other}, 0},
		{"none matches", web, []runtime.Object{other}, 1},
		{"no selector", bare, []runtime.Object{other}, 0},
	} {
		in, nsPods, err := Reader{Client: fake.NewClientset(c.pods...)}.LoadNearMisses(ctx, c.svc)
		if err != nil || len(nsPods) != c.nsPods || in.Service != c.svc {
			t.Errorf("%s: %d namespace Pods, want %d; %v", c.name, len(nsPods), c.nsPods, err)
		}
	}
}

// Only the Endpoints controller's object is returned.
func TestControllerEndpoints(t *testing.T) {
	ctx := context.Background()
	web := testutil.NewService("shop", "web").Selector("app", "web").Build()
	bare := testutil.NewService("shop", "web").Build()
	bare.Spec.Selector = nil
	controllers := endpointsObj("web", map[string]string{endpoints.LabelManagedBy: endpoints.ControllerManagedBy})
	ours := endpointsObj("web", map[string]string{endpoints.LabelManagedBy: "kubectl-slices"})
	for _, c := range []struct {
		name string
		svc  *corev1.Service
		objs []runtime.Object
		want bool
	}{
		{"the controller's", web, []runtime.Object{controllers}, true},
		{"ours", web, []runtime.Object{ours}, false},
		{"none", web, nil, false},
		{"no selector", bare, []runtime.Object{controllers}, false},
		{"no Service", nil, []runtime.Object{controllers}, false},
	} {
		got := Reader{Client: fake.NewClientset(c.objs...)}.ControllerEndpoints(ctx, c.svc)
		if (got != nil) != c.want {
			t.Errorf("%s: %v, want found %v", c.name, got, c.want)
		}
	}
}

func TestManifestsFind(t *testing.T) {
	m := &Manifests{Services: []*corev1.Service{
		testutil.NewService("shop", "web").Build(), testutil.NewService("ops", "api").Build(),
		testutil.NewService("a", "twice").Build(), testutil.NewService("b", "twice").Build()}}
	for _, c := range []struct {
		ns, name string
		pinned   bool
		wantNS   string
		found    bool
	}{
		{"shop", "web", true, "shop", true},
		{"default", "api", false, "ops", true},
		{"default", "api", true, "default", false},
		{"default", "twice", false, "default", false},
		{"default", "none", false, "default", false},
	} {
		ns, svc := m.Find(c.ns, c.name, c.pinned)
		if ns != c.wantNS || (svc != nil) != c.found || (svc != nil && (svc.Namespace != ns || svc.Name != c.name)) {
			t.Errorf("Find(%q, %q, %v) = %q, %v; want %q, found %v", c.ns, c.name, c.pinned, ns, svc, c.wantNS, c.found)
		}
	}
}

// Load defaults what a dump leaves out, finds the Service and its
// namespace's Pods, and says which Service it did not find.
func TestManifestsLoad(t *testing.T) {
	svc := testutil.NewService("", "web").Selector("app", "web").Port("http", 80, "8080").Build()
	pod := testutil.NewPod("", "web-1").Label("app", "web").IP("10.0.0.1").Build()
	stray := testutil.NewPod("", "other").Label("app", "other").IP("10.0.0.2").Build()
	m := &Manifests{Services: []*corev1.Service{svc}, Pods: []*corev1.Pod{pod, stray}}
	local, err := m.Load("shop", "web", false)
	if err != nil || local.Input.Service == nil || local.Input.Service.Namespace != "shop" || len(local.Input.Pods) != 1 || len(local.NamespacePods) != 2 {
		t.Fatalf("%+v, %v", local, err)
	}
	_, err = (&Manifests{Services: []*corev1.Service{testutil.NewService("", "web").Build()}}).Load("shop", "api", true)
	var nf *ServiceNotFoundError
	if !errors.As(err, &nf) || nf.Namespace != "shop" || nf.Name != "api" || err.Error() != "service shop/api not found" {
		t.Errorf("not found: %v", err)
	}
}
