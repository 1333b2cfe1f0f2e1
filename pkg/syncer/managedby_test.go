package syncer

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func namingClient(objs ...runtime.Object) *fake.Clientset {
	client := fake.NewClientset(objs...)
	n := 0
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice); s.Name == "" {
			n++
			s.Name = fmt.Sprintf("%s%d", s.GenerateName, n)
		}
		return false, nil, nil
	})
	return client
}

func labelsOf(t *testing.T, client *fake.Clientset) string {
	t.Helper()
	list, err := client.DiscoveryV1().EndpointSlices("shop").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Labels[discovery.LabelManagedBy])
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// Under a controller's own value each kind of slice carries its own
// controller's value; under any other value both carry the value given.
func TestSyncManagedByPerKind(t *testing.T) {
	ctx := context.Background()
	withSelector := testService()
	mirrored := testService()
	mirrored.Name, mirrored.Spec.Selector = "ext", nil
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "shop"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.9.0.1"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}
	for _, tc := range []struct {
		value, want string
	}{
		{reconcile.ControllerManagedBy, reconcile.ControllerManagedBy + "," + reconcile.MirroringManagedBy},
		{reconcile.MirroringManagedBy, reconcile.ControllerManagedBy + "," + reconcile.MirroringManagedBy},
		{reconcile.DefaultManagedBy, reconcile.DefaultManagedBy + "," + reconcile.DefaultManagedBy},
		{"mesh.example.io", "mesh.example.io,mesh.example.io"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			// No Pods: the selector Service gets its placeholder slice.
			client := namingClient(withSelector, mirrored, ep)
			po := reconcile.DefaultOptions()
			po.ManagedBy = tc.value
			for _, svc := range []*corev1.Service{withSelector, mirrored} {
				out := Sync(ctx, cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{Plan: po,
					Planner: MirroringPlanner(GetEndpoints(client)), Write: &apply.Options{ManagedBy: tc.value, Workers: 1}})
				if out.Err != nil {
					t.Fatalf("%s: %v", svc.Name, out.Err)
				}
			}
			if got := labelsOf(t, client); got != tc.want {
				t.Errorf("managed-by values %s, want %s", got, tc.want)
			}
			// A second run finds them its own: nothing to write.
			for _, svc := range []*corev1.Service{withSelector, mirrored} {
				out := Sync(ctx, cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{Plan: po,
					Planner: MirroringPlanner(GetEndpoints(client)), Write: &apply.Options{ManagedBy: tc.value, Workers: 1}})
				if out.Err != nil || out.Result.Writes() != 0 {
					t.Errorf("%s resync: %d writes, %v", svc.Name, out.Result.Writes(), out.Err)
				}
			}
			// DeleteAll removes both kinds under a controller's value.
			list, _ := client.DiscoveryV1().EndpointSlices("shop").List(ctx, metav1.ListOptions{})
			var all []*discovery.EndpointSlice
			for i := range list.Items {
				all = append(all, &list.Items[i])
			}
			if _, err := DeleteAll(ctx, client.DiscoveryV1(), "shop", all, apply.Options{ManagedBy: tc.value, Workers: 1}); err != nil {
				t.Fatal(err)
			}
			if got := labelsOf(t, client); got != "" {
				t.Errorf("left %s after DeleteAll", got)
			}
		})
	}
}

// A selectorless Service mirrored under a value, then given a selector:
// under either controller's value its mirrored slice goes (the mirroring
// controller deletes them), as under any other value (there it is one of
// ours the planner no longer wants); only the placeholder stays. Under our
// value the mirroring controller's own slice of the Service is not ours,
// and stays.
func TestSelectorAddedDeletesMirroredSlices(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		value, left string
	}{
		{reconcile.ControllerManagedBy, reconcile.ControllerManagedBy},
		{reconcile.MirroringManagedBy, reconcile.ControllerManagedBy},
		{reconcile.DefaultManagedBy, reconcile.DefaultManagedBy},
	} {
		t.Run(tc.value, func(t *testing.T) {
			svc := testService()
			svc.Spec.Selector = nil
			ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
				Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.9.0.1"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}
			client := namingClient(svc, ep)
			po := reconcile.DefaultOptions()
			po.ManagedBy = tc.value
			sync := func(svc *corev1.Service) Outcome {
				out := Sync(ctx, cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{Plan: po,
					Planner: MirroringPlanner(GetEndpoints(client)), Write: &apply.Options{ManagedBy: tc.value, Workers: 1}})
				if out.Err != nil {
					t.Fatal(out.Err)
				}
				return out
			}
			sync(svc)
			if got := labelsOf(t, client); got != reconcile.ManagedByFor(tc.value, true) {
				t.Fatalf("mirrored: %s", got)
			}
			withSel := testService()
			if out := sync(withSel); len(out.Result.Deleted) != 1 && tc.value != reconcile.DefaultManagedBy {
				t.Errorf("deleted %d slices, want the mirrored one", len(out.Result.Deleted))
			}
			if got := labelsOf(t, client); got != tc.left {
				t.Errorf("left %s, want the placeholder alone (%s)", got, tc.left)
			}
			if out := sync(withSel); out.Result.Writes() != 0 {
				t.Errorf("a second sync wrote %d", out.Result.Writes())
			}
		})
	}
	// The mirroring controller's slice beside our value stays.
	svc := testService()
	mirrored := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-m", Namespace: "shop",
		Labels:          map[string]string{discovery.LabelServiceName: "web", discovery.LabelManagedBy: reconcile.MirroringManagedBy},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: "web", Controller: ptrTrue()}}},
		AddressType: discovery.AddressTypeIPv4}
	client := namingClient(svc, mirrored)
	out := Sync(ctx, cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{Plan: reconcile.DefaultOptions(),
		Planner: MirroringPlanner(GetEndpoints(client)), Write: &apply.Options{ManagedBy: reconcile.DefaultManagedBy, Workers: 1}})
	if got := labelsOf(t, client); out.Err != nil || got != reconcile.MirroringManagedBy+","+reconcile.DefaultManagedBy {
		t.Errorf("under our value: %s, %v", got, out.Err)

	}
	// Whatever its owner (none here): upstream selects the mirrored slices
	// by their labels alone. Under a controller's value it goes; under ours
	// it stays.
	unowned := mirrored.DeepCopy()
	unowned.OwnerReferences = nil
	for value, left := range map[string]string{
		reconcile.ControllerManagedBy: reconcile.ControllerManagedBy,
		reconcile.DefaultManagedBy:    reconcile.MirroringManagedBy + "," + reconcile.DefaultManagedBy,
	} {
		client := namingClient(svc, unowned)
		po := reconcile.DefaultOptions()
		po.ManagedBy = value
		out := Sync(ctx, cluster.Reader{Client: client}, client.DiscoveryV1(), svc, Options{Plan: po,
			Planner: MirroringPlanner(GetEndpoints(client)), Write: &apply.Options{ManagedBy: value, Workers: 1}})
		if got := labelsOf(t, client); out.Err != nil || got != left {
			t.Errorf("an unowned mirrored slice under %s: left %s, want %s (%v)", value, got, left, out.Err)
		}
	}
}

func ptrTrue() *bool { b := true; return &b }
