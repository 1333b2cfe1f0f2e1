package cluster

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

func endpointsObj(name string, labels map[string]string) *corev1.Endpoints {
	b := testutil.NewEndpoints("shop", name).Annotation("team", "blue").
		Subset(corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.1", TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "p"}}},
			Ports: []corev1.EndpointPort{{Port: 80}}})
	for k, v := range labels {
		b.Label(k, v)
	}
	return b.Build()
}

// Endpoints a controller wrote are cached empty, hand-written ones whole;
// EndpointsOf answers the whole object either way, reading an emptied one
// from the API server.
func TestEndpointsCacheSlimsControllerObjects(t *testing.T) {
	hand := endpointsObj("hand", map[string]string{"app": "x"})
	kcm := endpointsObj("kcm", map[string]string{"app": "y", endpoints.LabelManagedBy: endpoints.ControllerManagedBy})
	client := fake.NewClientset(hand, kcm)
	c := NewCache(client, "shop")
	c.Endpoints = cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())
	for _, ep := range []*corev1.Endpoints{hand, kcm} {
		obj, _ := Transform(ep.DeepCopy())
		if err := c.Endpoints.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	cached, _, _ := c.Endpoints.GetByKey("shop/kcm")
	if got := cached.(*corev1.Endpoints); got.Subsets != nil || got.Labels[endpoints.LabelManagedBy] != endpoints.ControllerManagedBy {
		t.Errorf("the controller's object is cached as %+v", got)
	}
	for _, want := range []*corev1.Endpoints{hand, kcm} {
		got, err := c.EndpointsOf(context.Background(), "shop", want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Subsets, want.Subsets) || !reflect.DeepEqual(got.Labels, want.Labels) || !reflect.DeepEqual(got.Annotations, want.Annotations) {
			t.Errorf("%s: got %+v, want %+v", want.Name, got, want)
		}
	}
	// Gone from the API server since: none.
	if err := client.CoreV1().Endpoints("shop").Delete(context.Background(), "kcm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := c.EndpointsOf(context.Background(), "shop", "kcm"); got != nil || err != nil {
		t.Errorf("deleted: %v %v", got, err)
	}
}
