package mirror

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func selectorless() *corev1.Service {
	return testutil.NewService("ns", "ext").UID("svc-uid").Build()
}

// endpointsObj carries labels and annotations of its own, and the
// managed-by label, last-applied and trigger-time annotations that
// mirroring replaces or drops.
func endpointsObj(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
	b := testutil.NewEndpoints("ns", "ext").UID("ep-uid").Label("team", "db").Label(discovery.LabelManagedBy, "someone").
		Annotation("note", "x").Annotation(corev1.LastAppliedConfigAnnotation, "{}").Annotation(corev1.EndpointsLastChangeTriggerTime, "t")
	for _, s := range subsets {
		b.Subset(s)
	}
	return b.Build()
}

func opts() Options {
	return Options{ManagedBy: "ours", MaxEndpointsPerSubset: DefaultMaxEndpointsPerSubset}
}

func addrs(ips ...string) []corev1.EndpointAddress {
	var out []corev1.EndpointAddress
	for _, ip := range ips {
		out = append(out, corev1.EndpointAddress{IP: ip})
	}
	return out
}

// applied turns a plan's creates and updates into live slices, as the API
// server would return them, plus the unchanged ones.
func applied(t *testing.T, plan *reconcile.Plan) []*discovery.EndpointSlice {
	t.Helper()
	var out []*discovery.EndpointSlice
	for i, s := range plan.Final() {
		s = s.DeepCopy()
		if s.Name == "" {
			s.Name = fmt.Sprintf("%sgen%d", s.GenerateName, i)
		}
		s.ResourceVersion = fmt.Sprint(100 + i)
		if len(s.Annotations) == 0 {
			s.Annotations = nil // the API server drops empty maps
		}
		out = append(out, s)
	}
	return out
}

func TestMirrorOneSlicePerSubsetAndFamily(t *testing.T) {
	ep := endpointsObj(
		corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "fd00::1", "bad"), NotReadyAddresses: addrs("10.0.0.2"),
			Ports: []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
		corev1.EndpointSubset{Addresses: addrs("10.0.0.3"), Ports: []corev1.EndpointPort{{Port: 53, Protocol: corev1.ProtocolUDP}}},
	)
	svc := selectorless()
	in := Input{Service: svc, Endpoints: ep}
	before := ep.DeepCopy()
	plan, err := Compute(in, opts())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ep, before) {
		t.Fatal("input modified")
	}
	if plan.Service.Reason != reconcile.ServiceMirrored || len(plan.Create) != 3 || len(plan.Update)+len(plan.Delete) != 0 {
		t.Fatalf("want 3 creates, got %+v", plan)
	}
	ready := map[string]bool{}
	for _, s := range plan.Create {
		if s.GenerateName != "ext-" || s.Name != "" {
			t.Errorf("name %q generateName %q", s.Name, s.GenerateName)
		}
		want := map[string]string{"team": "db", discovery.LabelManagedBy: "ours", discovery.LabelServiceName: "ext"}
		if !reflect.DeepEqual(s.Labels, want) {
			t.Errorf("labels %v", s.Labels)
		}
		if !reflect.DeepEqual(s.Annotations, map[string]string{"note": "x"}) {
			t.Errorf("annotations %v", s.Annotations)
		}
		if ref := metav1.GetControllerOf(s); ref == nil || ref.Kind != "Endpoints" || ref.UID != "ep-uid" {
			t.Errorf("owner %v", s.OwnerReferences)
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Serving != nil || e.Conditions.Terminating != nil {
				t.Errorf("mirrored endpoints carry ready only: %+v", e.Conditions)
			}
			ready[e.Addresses[0]] = *e.Conditions.Ready
		}
	}
	if want := map[string]bool{"10.0.0.1": true, "fd00::1": true, "10.0.0.2": false, "10.0.0.3": true}; !reflect.DeepEqual(ready, want) {
		t.Fatalf("endpoints %v, want %v", ready, want)
	}
	if len(plan.Warnings) != 1 || plan.Warnings[0].Reason != InvalidIPAddress {
		t.Fatalf("warnings %v", plan.Warnings)
	}

	// Applied, the same input plans nothing.
	in.Slices = applied(t, plan)
	again, err := Compute(in, opts())
	if err != nil || !again.InSync() || len(again.Unchanged) != 3 {
		t.Fatalf("second plan not in sync: %+v %v", again, err)
	}
	// A label change on the Endpoints rewrites every slice in place.
	in.Endpoints = ep.DeepCopy()
	in.Endpoints.Labels["team"] = "web"
	changed, _ := Compute(in, opts())
	if len(changed.Update) != 3 || len(changed.Create)+len(changed.Delete) != 0 {
		t.Fatalf("label change: %d creates, %d updates, %d deletes", len(changed.Create), len(changed.Update), len(changed.Delete))
	}
}

func TestMirrorPortChangeRecyclesSlice(t *testing.T) {
	ep := endpointsObj(corev1.EndpointSubset{Addresses: addrs("10.0.0.1"), Ports: []corev1.EndpointPort{{Name: "a", Port: 80, Protocol: corev1.ProtocolTCP}}})
	in := Input{Service: selectorless(), Endpoints: ep}
	plan, _ := Compute(in, opts())
	in.Slices = applied(t, plan)
	in.Endpoints = ep.DeepCopy()
	in.Endpoints.Subsets[0].Ports[0].Port = 81
	next, _ := Compute(in, opts())
	if len(next.Update) != 1 || len(next.Create)+len(next.Delete) != 0 || next.Update[0].Name != in.Slices[0].Name || next.Update[0].ResourceVersion == "" {
		t.Fatalf("want one conditional update of %s, got %+v", in.Slices[0].Name, next)
	}
}

func TestMirrorAtMost1000PerSubset(t *testing.T) {
	var ready, notReady []string
	for i := 0; i < 1100; i++ {
		ready = append(ready, fmt.Sprintf("10.1.%d.%d", i/250, i%250+1))
	}
	for i := 0; i < 50; i++ {
		notReady = append(notReady, fmt.Sprintf("10.2.0.%d", i+1))
	}
	ep := endpointsObj(corev1.EndpointSubset{Addresses: addrs(ready...), NotReadyAddresses: addrs(notReady...)})
	plan, _ := Compute(Input{Service: selectorless(), Endpoints: ep}, opts())
	if len(plan.Create) != 1 || len(plan.Create[0].Endpoints) != 1000 {
		t.Fatalf("want one slice of 1000, got %d slices", len(plan.Create))
	}
	for _, e := range plan.Create[0].Endpoints {
		if !*e.Conditions.Ready {
			t.Fatalf("a not-ready address was mirrored before the ready ones: %v", e.Addresses)
		}
	}
	if len(plan.Warnings) != 1 || plan.Warnings[0].Reason != TooManyAddresses {
		t.Fatalf("warnings %v", plan.Warnings)
	}
}

func TestMirrorSkipDeletesOnlyMirroredSlices(t *testing.T) {
	ep := endpointsObj(corev1.EndpointSubset{Addresses: addrs("10.0.0.1")})
	in := Input{Service: selectorless(), Endpoints: ep}
	plan, _ := Compute(in, opts())
	mirrored := applied(t, plan)
	byService := mirrored[0].DeepCopy()
	byService.Name, byService.OwnerReferences = "ext-svc", []metav1.OwnerReference{{Kind: "Service", Name: "ext", Controller: ptr(true)}}
	foreign := mirrored[0].DeepCopy()
	foreign.Name, foreign.Labels = "ext-other", map[string]string{discovery.LabelServiceName: "ext", discovery.LabelManagedBy: "them"}
	in.Slices = append(mirrored, byService, foreign)
	for name, mod := range map[string]func(*corev1.Endpoints) *corev1.Endpoints{
		"skip-mirror":  func(e *corev1.Endpoints) *corev1.Endpoints { e.Labels[discovery.LabelSkipMirror] = "true"; return e },
		"leader lock":  func(e *corev1.Endpoints) *corev1.Endpoints { e.Annotations[LeaderElectionAnnotation] = "{}"; return e },
		"no endpoints": func(*corev1.Endpoints) *corev1.Endpoints { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			in := in
			in.Endpoints = mod(ep.DeepCopy())
			p, err := Compute(in, opts())
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Delete) != 1 || p.Delete[0].Name != mirrored[0].Name || len(p.Unchanged) != 1 || len(p.Foreign) != 1 || len(p.Create)+len(p.Update) != 0 {
				t.Fatalf("want the mirrored slice deleted, the Service's kept, the foreign one untouched: %+v", p)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// An Endpoints object deleted and recreated under the same name has a new
// UID: the slices are rewritten with the new owner even if nothing else
// changed, so garbage collection follows the live object.
func TestMirrorRewritesSlicesOfAnotherOwner(t *testing.T) {
	ep := endpointsObj(corev1.EndpointSubset{Addresses: addrs("10.0.0.1")})
	in := Input{Service: selectorless(), Endpoints: ep}
	plan, _ := Compute(in, opts())
	in.Slices = applied(t, plan)
	in.Endpoints = ep.DeepCopy()
	in.Endpoints.UID = "recreated"
	next, _ := Compute(in, opts())
	if len(next.Update) != 1 || next.Update[0].OwnerReferences[0].UID != "recreated" {
		t.Fatalf("want one update owned by the new object, got %+v", next)
	}
}

// Leftovers: the mirroring controller's slices of a Service with a
// selector, whatever their owner (upstream selects them by labels alone),
// not being deleted, by name; none for a selectorless Service.
func TestLeftovers(t *testing.T) {
	withSel := testutil.NewService("ns", "ext").Selector("app", "db").Build()
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Endpoints", Name: "ext", Controller: &[]bool{true}[0]}
	mk := func(name, svc, managedBy string, owned bool) *discovery.EndpointSlice {
		s := testutil.NewSlice("ns", name).Service(svc).ManagedBy(managedBy).Build()
		if owned {
			s.OwnerReferences = []metav1.OwnerReference{owner}
		}
		return s
	}
	deleting := mk("ext-d", "ext", reconcile.MirroringManagedBy, true)
	deleting.DeletionTimestamp = &metav1.Time{}
	all := []*discovery.EndpointSlice{
		mk("ext-b", "ext", reconcile.MirroringManagedBy, true), mk("ext-a", "ext", reconcile.MirroringManagedBy, true),
		mk("ext-c", "ext", reconcile.ControllerManagedBy, true), mk("ext-n", "ext", reconcile.MirroringManagedBy, false),
		mk("other-a", "other", reconcile.MirroringManagedBy, true), mk("ext-o", "ext", "ours", true), deleting,
	}
	var got []string
	for _, s := range Leftovers(withSel, all) {
		got = append(got, s.Name)
	}
	if fmt.Sprint(got) != "[ext-a ext-b ext-n]" {
		t.Errorf("leftovers %v, want [ext-a ext-b ext-n]", got)
	}
	if l := Leftovers(selectorless(), all); len(l) != 0 {
		t.Errorf("a selectorless Service has leftovers: %d", len(l))
	}
	if all[0].Name != "ext-b" {
		t.Error("the input was reordered")
	}
}
