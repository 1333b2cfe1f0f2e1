package lifecycle

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

func external(ips ...string) (*corev1.Service, *corev1.Endpoints) {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "shop", UID: "uid-ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "shop", UID: "uid-ep"},
		Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}
	for _, ip := range ips {
		ep.Subsets[0].Addresses = append(ep.Subsets[0].Addresses, corev1.EndpointAddress{IP: ip})
	}
	return s, ep
}

// seed mirrors ext's Endpoints into slices as sync does, under managedBy.
func seed(t *testing.T, client *fake.Clientset, s *corev1.Service, managedBy string) {
	t.Helper()
	// The fake does not generate names.
	n := 0
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice); s.Name == "" {
			n++
			s.Name = fmt.Sprintf("%s%d", s.GenerateName, n)
		}
		return false, nil, nil
	})
	opts := reconcile.DefaultOptions()
	opts.ManagedBy = managedBy
	out := syncer.Sync(context.Background(), cluster.Reader{Client: client}, client.DiscoveryV1(), s, syncer.Options{Plan: opts,
		Planner: syncer.MirroringPlanner(syncer.GetEndpoints(client)),
		Write:   &apply.Options{ManagedBy: managedBy, FieldManager: apply.FieldManager, Workers: 1}})
	if out.Err != nil || out.Result.Writes() == 0 {
		t.Fatalf("seed: %v, %d writes", out.Err, out.Result.Writes())
	}
}

func kinds(r explain.CheckReport) string {
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Service+" "+string(f.Kind))
	}
	return strings.Join(got, ",")
}

// check judges a selector-less Service's mirrored slices against its
// Endpoints object, as sync would write them: in sync, stale once the
// Endpoints changed, orphaned once it is gone, missing when no slice
// publishes it at all. Under a controller's value the mirrored slices carry
// the mirroring controller's, and check still finds them ours.
func TestAuditJudgesMirroredSlices(t *testing.T) {
	ctx := context.Background()
	for _, managedBy := range []string{reconcile.DefaultManagedBy, reconcile.ControllerManagedBy} {
		t.Run(managedBy, func(t *testing.T) {
			s, ep := external("10.9.0.1", "10.9.0.2")
			client := fake.NewClientset(s, ep)
			opts := reconcile.DefaultOptions()
			opts.ManagedBy = managedBy

			r, err := Audit(ctx, client, "shop", opts)
			if err != nil || kinds(r) != "ext NoSlices" {
				t.Fatalf("before any sync: %q, %v", kinds(r), err)
			}
			seed(t, client, s, managedBy)
			list, _ := client.DiscoveryV1().EndpointSlices("shop").List(ctx, metav1.ListOptions{})
			want := reconcile.ManagedByFor(managedBy, true)
			if len(list.Items) != 1 || list.Items[0].Labels[discovery.LabelManagedBy] != want {
				t.Fatalf("seeded %+v, want one slice managed by %s", list.Items, want)
			}
			if r, err = Audit(ctx, client, "shop", opts); err != nil || !r.Healthy {
				t.Fatalf("after sync: %q, %v", kinds(r), err)
			}

			_, changed := external("10.9.0.1", "10.9.0.3")
			if _, err := client.CoreV1().Endpoints("shop").Update(ctx, changed, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			r, err = Audit(ctx, client, "shop", opts)
			if err != nil || kinds(r) != "ext Stale" || r.Findings[0].Command != "kubectl slices sync svc/ext -n shop" ||
				strings.Join(r.Findings[0].ManagedBy, ",") != want {
				t.Fatalf("Endpoints changed: %+v, %v", r.Findings, err)
			}

			if err := client.CoreV1().Endpoints("shop").Delete(ctx, "ext", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			r, err = Audit(ctx, client, "shop", opts)
			if err != nil || kinds(r) != "ext Orphaned" || len(r.Findings[0].Slices) != 1 || r.Findings[0].Slices[0] != list.Items[0].Name {
				t.Fatalf("Endpoints gone: %+v, %v", r.Findings, err)
			}
		})
	}
}

// One of two mirrored slices deleted by hand is a stale finding naming
// what is left; the mirroring controller's own slices publish the Service
// when ours are absent, which is healthy.
func TestAuditMirroredMissingAndController(t *testing.T) {
	ctx := context.Background()
	s, ep := external("10.9.0.1")
	ep.Subsets = append(ep.Subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{{IP: "10.9.0.2"}},
		Ports: []corev1.EndpointPort{{Name: "http", Port: 9090, Protocol: corev1.ProtocolTCP}}})
	client := fake.NewClientset(s, ep)
	seed(t, client, s, reconcile.DefaultManagedBy)
	list, _ := client.DiscoveryV1().EndpointSlices("shop").List(ctx, metav1.ListOptions{})
	if len(list.Items) != 2 {
		t.Fatalf("seeded %d slices, want 2", len(list.Items))
	}
	if err := client.DiscoveryV1().EndpointSlices("shop").Delete(ctx, list.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := Audit(ctx, client, "shop", reconcile.DefaultOptions())
	if err != nil || kinds(r) != "ext Stale" || !strings.Contains(r.Findings[0].Message, "1 slice to create") {
		t.Fatalf("one deleted: %+v, %v", r.Findings, err)
	}

	theirs := list.Items[1].DeepCopy()
	theirs.Name, theirs.ResourceVersion, theirs.ManagedFields = "ext-mirror", "", nil
	theirs.Labels[discovery.LabelManagedBy] = reconcile.MirroringManagedBy
	client = fake.NewClientset(s, ep, theirs)
	if r, err = Audit(ctx, client, "shop", reconcile.DefaultOptions()); err != nil || !r.Healthy {
		t.Fatalf("controller publishes: %q, %v", kinds(r), err)
	}
}

// Without the right to read Endpoints, check carries on as explain and
// sync do and says what it skipped; a refusal is not asked again for each
// Service.
func TestAuditWithoutEndpointsRights(t *testing.T) {
	s, ep := external("10.9.0.1")
	s2 := s.DeepCopy()
	s2.Name, s2.UID = "ext2", "uid-ext2"
	client := fake.NewClientset(s, s2, ep, svc("web"))
	gets := 0
	client.PrependReactor("*", "endpoints", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() == "get" {
			gets++
		}
		return true, nil, forbidden(a.GetVerb(), "endpoints")
	})
	r, err := Audit(context.Background(), client, "shop", reconcile.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Skipped) != 2 || !strings.Contains(r.Skipped[0], "not checked: listing Endpoints is forbidden") ||
		!strings.Contains(r.Skipped[1], "mirrored slices of 2 Services without selector not checked") || gets != 1 {
		t.Fatalf("skipped %q after %d GETs", r.Skipped, gets)
	}
	if kinds(r) != "web NoSlices" {
		t.Errorf("findings %q", kinds(r))
	}
}

func forbidden(verb, resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", fmt.Errorf("user cannot %s %s", verb, resource))
}

// check flags a mirrored slice under the mirroring controller's value that
// another field manager wrote (a hint: the name is the client's), and not
// the one kube-controller-manager's field manager wrote.
func TestAuditForeignWriter(t *testing.T) {
	ctx := context.Background()
	s, ep := external("10.9.0.1")
	client := fake.NewClientset(s, ep)
	seed(t, client, s, reconcile.DefaultManagedBy)
	list, _ := client.DiscoveryV1().EndpointSlices("shop").List(ctx, metav1.ListOptions{})
	if len(list.Items) != 1 {
		t.Fatalf("seeded %d slices, want 1", len(list.Items))
	}
	if err := client.DiscoveryV1().EndpointSlices("shop").Delete(ctx, list.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, fm := range []string{"kube-controller-manager", "kubectl-create"} {
		c := list.Items[0].DeepCopy()
		c.Name, c.ResourceVersion, c.ManagedFields = "ext-"+fm, "", nil
		c.Labels[discovery.LabelManagedBy] = reconcile.MirroringManagedBy
		if _, err := client.DiscoveryV1().EndpointSlices("shop").Create(ctx, c, metav1.CreateOptions{FieldManager: fm}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Audit(ctx, client, "shop", reconcile.DefaultOptions())
	if err != nil || kinds(r) != "ext ForeignWriter" || strings.Join(r.Findings[0].Slices, ",") != "ext-kubectl-create" ||
		r.Findings[0].Command != "kubectl delete endpointslice -n shop ext-kubectl-create" {
		t.Fatalf("findings %+v, %v", r.Findings, err)
	}
}

// The controllers' slices are read a page at a time, every page: a flagged
// slice on the last page is reported.
func TestForeignWritersPaged(t *testing.T) {
	client := fake.NewClientset()
	page := func(name, manager, next string) *discovery.EndpointSliceList {
		s := discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop",
			Labels:        map[string]string{discovery.LabelManagedBy: reconcile.ControllerManagedBy, discovery.LabelServiceName: "web"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: manager}}}}
		return &discovery.EndpointSliceList{ListMeta: metav1.ListMeta{Continue: next}, Items: []discovery.EndpointSlice{s}}
	}
	pages := map[string]*discovery.EndpointSliceList{"": page("web-a", "kube-controller-manager", "p2"), "p2": page("web-b", "kubectl-create", "")}
	var asked []string
	client.PrependReactor("list", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		opts := a.(k8stesting.ListActionImpl).ListOptions
		asked = append(asked, fmt.Sprintf("%s limit=%d continue=%q", opts.LabelSelector, opts.Limit, opts.Continue))
		return true, pages[opts.Continue], nil
	})
	got, err := foreignWriters(context.Background(), client, "shop", reconcile.DefaultManagedBy)
	if err != nil || len(got) != 1 || strings.Join(got[0].Slices, ",") != "web-b" {
		t.Fatalf("findings %+v, %v", got, err)
	}
	sel := "endpointslice.kubernetes.io/managed-by in (endpointslice-controller.k8s.io,endpointslicemirroring-controller.k8s.io)"
	if want := []string{sel + ` limit=500 continue=""`, sel + ` limit=500 continue="p2"`}; fmt.Sprint(asked) != fmt.Sprint(want) {
		t.Errorf("lists %q, want %q", asked, want)
	}
}
