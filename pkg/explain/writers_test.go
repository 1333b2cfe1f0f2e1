package explain

import (
	"reflect"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func written(name, svc, managedBy string, managers ...string) *discovery.EndpointSlice {
	s := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop",
		Labels: map[string]string{discovery.LabelManagedBy: managedBy, discovery.LabelServiceName: svc}}}
	for _, m := range managers {
		s.ManagedFields = append(s.ManagedFields, metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate})
	}
	return s
}

// A controller-labelled slice whose managedFields name another writer is
// flagged, as a hint: the controller's own, ours and other managers' are
// not, and a run under a controller's value expects its own field manager
// there.
func TestForeignWriters(t *testing.T) {
	const ctrl, mirroring = "endpointslice-controller.k8s.io", "endpointslicemirroring-controller.k8s.io"
	in := []*discovery.EndpointSlice{
		written("web-a", "web", ctrl, "kube-controller-manager"),
		written("web-forged", "web", ctrl, "kubectl-create"),
		written("web-edited", "web", ctrl, "kube-controller-manager", "kubectl-label", "kubectl-label"),
		written("web-ours", "web", "kubectl-slices", "kubectl-slices"),
		written("web-other", "web", "some-operator", "some-operator"),
		written("web-synced", "web", ctrl, "kubectl-slices"),
		written("ext-m", "ext", mirroring, "kube-controller-manager", "kubectl-slices"),
		written("api-cleared", "api", ctrl),
	}
	before := in[1].DeepCopy()
	got := ForeignWriters(in, "kubectl-slices", []string{"kubectl-slices"})
	var lines []string
	for _, f := range got {
		lines = append(lines, f.Service+" "+string(f.Kind)+" "+strings.Join(f.ManagedBy, ",")+" "+strings.Join(f.Slices, ",")+" | "+f.Command)
	}
	want := []string{
		"ext ForeignWriter " + mirroring + " ext-m | kubectl delete endpointslice -n shop ext-m",
		"web ForeignWriter " + ctrl + " web-forged,web-edited,web-synced | kubectl delete endpointslice -n shop web-forged web-edited web-synced",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range []string{"web-forged: kubectl-create; web-edited: kubectl-label; web-synced: kubectl-slices", "proves nothing", "--controller-user"} {
		if !strings.Contains(got[1].Message, s) {
			t.Errorf("message %q lacks %q", got[1].Message, s)
		}
	}
	if !reflect.DeepEqual(in[1], before) {
		t.Error("ForeignWriters changed its input")
	}
	// Under a controller's value, our own writes under it are expected.
	got = ForeignWriters(in, ctrl, []string{"kubectl-slices"})
	if len(got) != 1 || strings.Join(got[0].Slices, ",") != "web-forged,web-edited" {
		t.Fatalf("under the controller's value: %+v", got)
	}
}
