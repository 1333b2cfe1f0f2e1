package webhook

import (
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func slice(managedBy string) *discovery.EndpointSlice {
	return &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns",
		Labels: map[string]string{discovery.LabelManagedBy: managedBy, discovery.LabelServiceName: "web"}}}
}

func labelled(s *discovery.EndpointSlice, k, v string) *discovery.EndpointSlice {
	s = s.DeepCopy()
	s.Labels[k] = v
	return s
}

func TestGuard(t *testing.T) {
	g := Guard{ManagedBy: "kubectl-slices", FieldManagers: []string{"kubectl-slices"}, Users: []string{"system:serviceaccount:ops:slices", "admin"}, Groups: []string{"slice-writers"}}
	ours, ctrl, other := slice("kubectl-slices"), slice("endpointslice-controller.k8s.io"), slice("some-operator")
	loop := "system:serviceaccount:ops:slices"
	cases := []struct {
		name  string
		w     SliceWrite
		allow bool
		want  []string
	}{
		{"label by an allowed admin", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-label", User: "admin"}, false,
			[]string{"endpointslice web-abc is managed by kubectl-slices", "kubectl slices sync svc/web -n ns", "kubectl slices release svc/web -n ns", "admin (field manager kubectl-label)"}},
		{"patch without field manager", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), User: "admin"}, false, nil},
		{"create of ours by hand", SliceWrite{Operation: "CREATE", New: ours, FieldManager: "kubectl-create", User: "admin"}, false, []string{"kubectl slices sync"}},
		{"allowed admin's sync", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-slices", User: "admin"}, true, nil},
		{"allowed admin's create", SliceWrite{Operation: "CREATE", New: ours, FieldManager: "kubectl-slices", User: "admin"}, true, nil},
		{"the loop's ServiceAccount", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-slices", User: loop, Groups: []string{"system:serviceaccounts"}}, true, nil},
		{"allowed group's sync", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-slices", User: "bob", Groups: []string{"dev", "slice-writers"}}, true, nil},
		{"allowed group's edit", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-edit", User: "bob", Groups: []string{"dev", "slice-writers"}}, false, []string{"next sync would undo"}},
		// Anyone can send our field manager: it admits no one by itself.
		{"our field manager from a stranger", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-slices", User: "mallory", Groups: []string{"system:authenticated"}}, false,
			[]string{"mallory is not one of them, whatever its field manager", "--allow-user", "mallory (field manager kubectl-slices)"}},
		{"our label and field manager on a stranger's create", SliceWrite{Operation: "CREATE", New: ours, FieldManager: "kubectl-slices", User: "mallory"}, false, []string{"mallory is not one of them"}},
		{"a stranger's relabel", SliceWrite{Operation: "UPDATE", Old: ctrl, New: ours, FieldManager: "kubectl-slices", User: "mallory"}, false, []string{"mallory is not one of them"}},
		{"no user", SliceWrite{Operation: "UPDATE", Old: ours, New: labelled(ours, "touched", "yes"), FieldManager: "kubectl-slices"}, false, nil},
		{"delete", SliceWrite{Operation: "DELETE", Old: ours, User: "mallory"}, true, nil},
		{"moved to another manager", SliceWrite{Operation: "UPDATE", Old: ours, New: ctrl, FieldManager: "kubectl-label", User: "admin"}, false,
			[]string{"relabelling it to endpointslice-controller.k8s.io", "kubectl slices release svc/web -n ns"}},
		{"taken over by hand", SliceWrite{Operation: "UPDATE", Old: ctrl, New: ours, FieldManager: "kubectl-label", User: "admin"}, false, []string{"may not be labelled"}},
		{"other manager's slice", SliceWrite{Operation: "UPDATE", Old: other, New: labelled(other, "touched", "yes"), FieldManager: "kubectl-label", User: "mallory"}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := g.Judge(c.w)
			if v.Allowed != c.allow {
				t.Fatalf("allowed %v, want %v (%s)", v.Allowed, c.allow, v.Message)
			}
			for _, w := range c.want {
				if !strings.Contains(v.Message, w) {
					t.Errorf("message %q lacks %q", v.Message, w)
				}
			}
		})
	}
}

// owned returns a copy of s with ownerReferences, finalizers and the
// metadata the API server sets on a write changed as given.
func owned(s *discovery.EndpointSlice, refs []metav1.OwnerReference, finalizers ...string) *discovery.EndpointSlice {
	s = s.DeepCopy()
	s.OwnerReferences, s.Finalizers = refs, finalizers
	s.ResourceVersion, s.Generation = "43", 2
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}
	return s
}

// The garbage collector's writes to a slice, ours or the controller's, pass
// whoever makes them: they change only ownerReferences and remove
// finalizers. Anything else in the same write is still judged.
func TestGuardOwnerMetadata(t *testing.T) {
	g := Guard{ManagedBy: "kubectl-slices", FieldManagers: []string{"kubectl-slices"}, Users: []string{"system:serviceaccount:ops:slices"},
		ControllerUsers: DefaultControllerUsers}
	svcRef := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: "u1", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	unblocked := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: "u1", Controller: ptr(true), BlockOwnerDeletion: ptr(false)}}
	// A tenant's second Service reference beside the one there, or in its
	// place: the slice would be another Service's (or no one's) to the loop.
	foreign := metav1.OwnerReference{APIVersion: "v1", Kind: "Service", Name: "other", UID: "u2"}
	added := append(append([]metav1.OwnerReference(nil), svcRef...), foreign)
	swapped := []metav1.OwnerReference{foreign}
	uncontrolled := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: "web", UID: "u1", BlockOwnerDeletion: ptr(true)}}
	gc := "system:serviceaccount:kube-system:generic-garbage-collector"
	for _, mb := range []string{"kubectl-slices", "endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"} {
		base := owned(slice(mb), svcRef, "foregroundDeletion", "example.com/keep")
		base.ResourceVersion, base.Generation, base.ManagedFields = "42", 1, nil
		cases := []struct {
			name  string
			new   *discovery.EndpointSlice
			allow bool
		}{
			{"orphaned: ownerReference removed", owned(base, nil, base.Finalizers...), true},
			{"blockOwnerDeletion cleared", owned(base, unblocked, base.Finalizers...), true},
			{"foregroundDeletion removed", owned(base, svcRef, "example.com/keep"), true},
			{"every finalizer removed", owned(base, svcRef), true},
			{"finalizers reordered", owned(base, svcRef, "example.com/keep", "foregroundDeletion"), true},
			{"finalizer added", owned(base, svcRef, "foregroundDeletion", "example.com/keep", "example.com/pin"), false},
			{"finalizer swapped", owned(base, svcRef, "foregroundDeletion", "example.com/pin"), false},
			{"ownerReference added", owned(base, added, base.Finalizers...), false},
			{"ownerReference replaced", owned(base, swapped, base.Finalizers...), false},
			{"ownerReference duplicated", owned(base, append(append([]metav1.OwnerReference(nil), svcRef...), svcRef...), base.Finalizers...), false},
			{"ownerReference's controller flag cleared", owned(base, uncontrolled, base.Finalizers...), false},
			{"ownerReference removed and another added", owned(base, []metav1.OwnerReference{foreign}, base.Finalizers...), false},
			{"ownerReference removed and a label changed", labelled(owned(base, nil, base.Finalizers...), "touched", "yes"), false},
			{"ownerReference removed and an annotation set", annotated(owned(base, nil, base.Finalizers...)), false},
			{"ownerReference removed and an endpoint added", withEndpoint(owned(base, nil, base.Finalizers...)), false},
		}
		for _, c := range cases {
			t.Run(mb+"/"+c.name, func(t *testing.T) {
				before := base.DeepCopy()
				v := g.Judge(SliceWrite{Operation: "UPDATE", Old: base, New: c.new, User: gc})
				if v.Allowed != c.allow {
					t.Fatalf("allowed %v, want %v (%s)", v.Allowed, c.allow, v.Message)
				}
				if !equality.Semantic.DeepEqual(before, base) {
					t.Fatal("Judge changed its input")
				}
			})
		}
		t.Run(mb+"/blockOwnerDeletion set again", func(t *testing.T) {
			was := owned(base, unblocked, base.Finalizers...)
			if v := g.Judge(SliceWrite{Operation: "UPDATE", Old: was, New: owned(was, svcRef, base.Finalizers...), User: gc}); v.Allowed {
				t.Fatal("setting blockOwnerDeletion passed as the collector's write")
			}
		})
		t.Run(mb+"/a tenant adds a Service reference", func(t *testing.T) {
			v := g.Judge(SliceWrite{Operation: "UPDATE", Old: base, New: owned(base, added, base.Finalizers...), FieldManager: "kubectl-patch", User: "tenant"})
			if v.Allowed || !strings.Contains(v.Message, "tenant") {
				t.Fatalf("allowed %v (%s), want refused naming the tenant", v.Allowed, v.Message)
			}
		})
	}
}

func annotated(s *discovery.EndpointSlice) *discovery.EndpointSlice {
	s.Annotations = map[string]string{"note": "x"}
	return s
}

func withEndpoint(s *discovery.EndpointSlice) *discovery.EndpointSlice {
	s.Endpoints = append(s.Endpoints, discovery.Endpoint{Addresses: []string{"10.0.0.9"}})
	return s
}

func ptr[T any](v T) *T { return &v }

// Slices under the controllers' values are written by the controller
// manager's identities alone: the label is the client's word, the user the
// API server's.
func TestGuardController(t *testing.T) {
	kcm, sa := "system:kube-controller-manager", "system:serviceaccount:kube-system:endpointslice-controller"
	mirroring := "system:serviceaccount:kube-system:endpointslicemirroring-controller"
	g := Guard{ManagedBy: "kubectl-slices", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers}
	ctrl, mirrored, ours, other := slice("endpointslice-controller.k8s.io"), slice("endpointslicemirroring-controller.k8s.io"), slice("kubectl-slices"), slice("some-operator")
	cases := []struct {
		name  string
		g     Guard
		w     SliceWrite
		allow bool
		want  []string
	}{
		{"forged create by a tenant", g, SliceWrite{Operation: "CREATE", New: ctrl, FieldManager: "kube-controller-manager", User: "system:serviceaccount:team:ci", Groups: []string{"system:masters"}}, false,
			[]string{"endpointslice web-abc is labelled endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io", "only kube-controller-manager writes", "--controller-user",
				"system:serviceaccount:team:ci is not one of them", "[refused for system:serviceaccount:team:ci (field manager kube-controller-manager)]"}},
		{"forged mirrored create", g, SliceWrite{Operation: "CREATE", New: mirrored, User: "tenant"}, false, []string{"managed-by=endpointslicemirroring-controller.k8s.io"}},
		{"an allowed writer of ours is no controller", g, SliceWrite{Operation: "CREATE", New: ctrl, FieldManager: "kubectl-slices", User: "admin"}, false, []string{"admin is not one of them"}},
		{"no user", g, SliceWrite{Operation: "CREATE", New: ctrl}, false, nil},
		{"the controller manager's user", g, SliceWrite{Operation: "CREATE", New: ctrl, User: kcm}, true, nil},
		{"the controller's ServiceAccount", g, SliceWrite{Operation: "UPDATE", Old: ctrl, New: withEndpoint(ctrl.DeepCopy()), User: sa}, true, nil},
		{"the mirroring controller's ServiceAccount", g, SliceWrite{Operation: "CREATE", New: mirrored, User: mirroring}, true, nil},
		{"a hand edit of the controller's slice", g, SliceWrite{Operation: "UPDATE", Old: ctrl, New: withEndpoint(ctrl.DeepCopy()), FieldManager: "kubectl-edit", User: "admin"}, false, []string{"admin is not one of them"}},
		{"a relabel away from the controller", g, SliceWrite{Operation: "UPDATE", Old: ctrl, New: other, User: "tenant"}, false, []string{"managed-by=endpointslice-controller.k8s.io"}},
		{"a relabel to the controller", g, SliceWrite{Operation: "UPDATE", Old: other, New: ctrl, User: "tenant"}, false, nil},
		{"a delete", g, SliceWrite{Operation: "DELETE", Old: ctrl, User: "tenant"}, true, nil},
		{"another manager's slice", g, SliceWrite{Operation: "CREATE", New: other, User: "tenant"}, true, nil},
		// Ours stay ours to judge: the controller manager is not the loop.
		{"the controller manager writing ours", g, SliceWrite{Operation: "UPDATE", Old: ours, New: withEndpoint(ours.DeepCopy()), User: kcm}, false, []string{"is managed by kubectl-slices"}},
		// The identities are configurable.
		{"a configured controller user", Guard{ManagedBy: "kubectl-slices", ControllerUsers: []string{"kcm-x"}}, SliceWrite{Operation: "CREATE", New: ctrl, User: "kcm-x"}, true, nil},
		{"a default one not configured", Guard{ManagedBy: "kubectl-slices", ControllerUsers: []string{"kcm-x"}}, SliceWrite{Operation: "CREATE", New: ctrl, User: kcm}, false, nil},
		{"no controller users: unguarded", Guard{ManagedBy: "kubectl-slices"}, SliceWrite{Operation: "CREATE", New: ctrl, User: "tenant"}, true, nil},
		// Under a controller's value the loop writes it: ours to guard.
		{"our value is the controller's", Guard{ManagedBy: "endpointslice-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "CREATE", New: ctrl, FieldManager: "kubectl-slices", User: "admin"}, true, nil},
		{"our value is the controller's: the mirrored kind", Guard{ManagedBy: "endpointslice-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "CREATE", New: mirrored, FieldManager: "kubectl-slices", User: "admin"}, true, nil},
		// ... and both values stay guarded as ours: a tenant may write neither.
		{"our value is the controller's: a tenant's mirrored slice", Guard{ManagedBy: "endpointslice-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "CREATE", New: mirrored, FieldManager: "kubectl-slices", User: "tenant"}, false,
			[]string{"tenant is not one of them"}},
		{"our value is the controller's: a tenant's controller slice", Guard{ManagedBy: "endpointslice-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "CREATE", New: ctrl, FieldManager: "kubectl-slices", User: "tenant"}, false, []string{"tenant is not one of them"}},
		{"our value is the mirroring controller's: a tenant's controller slice", Guard{ManagedBy: "endpointslicemirroring-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "CREATE", New: ctrl, FieldManager: "kubectl-slices", User: "tenant"}, false, []string{"tenant is not one of them"}},
		{"our value is the controller's: a tenant relabels a mirrored slice away", Guard{ManagedBy: "endpointslice-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "UPDATE", Old: mirrored, New: other, User: "tenant"}, false, []string{"tenant is not one of them"}},
		{"our value is the controller's: an allowed writer's hand-made mirrored slice", Guard{ManagedBy: "endpointslice-controller.k8s.io", FieldManagers: []string{"kubectl-slices"}, Users: []string{"admin"}, ControllerUsers: DefaultControllerUsers},
			SliceWrite{Operation: "CREATE", New: mirrored, FieldManager: "kubectl-create", User: "admin"}, false,
			[]string{"may not be labelled endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io by hand"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := c.g.Judge(c.w)
			if v.Allowed != c.allow {
				t.Fatalf("allowed %v, want %v (%s)", v.Allowed, c.allow, v.Message)
			}
			for _, w := range c.want {
				if !strings.Contains(v.Message, w) {
					t.Errorf("message %q lacks %q", v.Message, w)
				}
			}
		})
	}
}

func TestCheckControllerUsers(t *testing.T) {
	if err := CheckControllerUsers(DefaultControllerUsers); err != nil {
		t.Fatal(err)
	}
	if err := CheckControllerUsers([]string{"system:kube-controller-manager", ""}); err == nil || !strings.Contains(err.Error(), "--controller-user must name a user") {
		t.Fatalf("an empty user: %v", err)
	}
}
