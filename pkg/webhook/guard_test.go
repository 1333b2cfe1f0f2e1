package webhook

import (
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func slice(managedBy string) *discovery.EndpointSlice {
	return &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns",
		Labels: map[string]string{discovery.LabelManagedBy: managedBy, discovery.LabelServiceName: "web"}}}
}

func TestGuard(t *testing.T) {
	g := Guard{ManagedBy: "kubectl-slices", FieldManagers: []string{"kubectl-slices"}, Users: []string{"system:serviceaccount:ops:slices", "admin"}, Groups: []string{"slice-writers"}}
	ours, ctrl := slice("kubectl-slices"), slice("endpointslice-controller.k8s.io")
	loop := "system:serviceaccount:ops:slices"
	cases := []struct {
		name  string
		w     SliceWrite
		allow bool
		want  []string
	}{
		{"label by an allowed admin", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-label", User: "admin"}, false,
			[]string{"endpointslice web-abc is managed by kubectl-slices", "kubectl slices sync svc/web -n ns", "kubectl slices release svc/web -n ns", "admin (field manager kubectl-label)"}},
		{"patch without field manager", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, User: "admin"}, false, nil},
		{"create of ours by hand", SliceWrite{Operation: "CREATE", New: ours, FieldManager: "kubectl-create", User: "admin"}, false, []string{"kubectl slices sync"}},
		{"allowed admin's sync", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-slices", User: "admin"}, true, nil},
		{"allowed admin's create", SliceWrite{Operation: "CREATE", New: ours, FieldManager: "kubectl-slices", User: "admin"}, true, nil},
		{"the loop's ServiceAccount", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-slices", User: loop, Groups: []string{"system:serviceaccounts"}}, true, nil},
		{"allowed group's sync", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-slices", User: "bob", Groups: []string{"dev", "slice-writers"}}, true, nil},
		{"allowed group's edit", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-edit", User: "bob", Groups: []string{"dev", "slice-writers"}}, false, []string{"next sync would undo"}},
		// Anyone can send our field manager: it admits no one by itself.
		{"our field manager from a stranger", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-slices", User: "mallory", Groups: []string{"system:authenticated"}}, false,
			[]string{"mallory is not one of them, whatever its field manager", "--allow-user", "mallory (field manager kubectl-slices)"}},
		{"our label and field manager on a stranger's create", SliceWrite{Operation: "CREATE", New: ours, FieldManager: "kubectl-slices", User: "mallory"}, false, []string{"mallory is not one of them"}},
		{"a stranger's relabel", SliceWrite{Operation: "UPDATE", Old: ctrl, New: ours, FieldManager: "kubectl-slices", User: "mallory"}, false, []string{"mallory is not one of them"}},
		{"no user", SliceWrite{Operation: "UPDATE", Old: ours, New: ours, FieldManager: "kubectl-slices"}, false, nil},
		{"delete", SliceWrite{Operation: "DELETE", Old: ours, User: "mallory"}, true, nil},
		{"moved to another manager", SliceWrite{Operation: "UPDATE", Old: ours, New: ctrl, FieldManager: "kubectl-label", User: "admin"}, false,
			[]string{"relabelling it to endpointslice-controller.k8s.io", "kubectl slices release svc/web -n ns"}},
		{"taken over by hand", SliceWrite{Operation: "UPDATE", Old: ctrl, New: ours, FieldManager: "kubectl-label", User: "admin"}, false, []string{"may not be labelled"}},
		{"other manager's slice", SliceWrite{Operation: "UPDATE", Old: ctrl, New: ctrl, FieldManager: "kubectl-label", User: "mallory"}, true, nil},
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
