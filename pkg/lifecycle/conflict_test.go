package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// A slice of ours rewritten between release's read and its delete (the
// delete's preconditions fail with a conflict) is read and judged again:
// still the same as the controller's, it goes; now publishing an endpoint
// the controller does not, it stays and release says why.
func TestReleaseRejudgesAfterConflict(t *testing.T) {
	ours := func(rv string, addrs ...string) *discovery.EndpointSlice {
		return testutil.NewSlice("shop", "ours").Service("web").ManagedBy(reconcile.DefaultManagedBy).ResourceVersion(rv).Ready(addrs...).Build()
	}
	kcm := testutil.NewSlice("shop", "kcm").Service("web").ManagedBy(reconcile.ControllerManagedBy).ResourceVersion("5").Ready("10.0.0.1").Build()
	for _, tc := range []struct {
		name      string
		rewritten *discovery.EndpointSlice
		left      string
		refused   string
	}{
		{"still the same", ours("4", "10.0.0.1"), "kcm", ""},
		{"now differs", ours("4", "10.0.0.1", "10.0.0.9"), "kcm,ours", "differ from ours in 1 endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(ours("3", "10.0.0.1"), kcm)
			conflicts := 0
			client.PrependReactor("delete", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if conflicts > 0 {
					return false, nil, nil
				}
				conflicts++
				// Someone rewrote ours after release read it.
				if err := client.Tracker().Update(discovery.SchemeGroupVersion.WithResource("endpointslices"), tc.rewritten, "shop"); err != nil {
					t.Fatal(err)
				}
				return true, nil, apierrors.NewConflict(discovery.Resource("endpointslices"), "ours", errors.New("the object has been modified"))
			})
			out := Release(context.Background(), client, svc("web"), ReleaseOptions{Write: write})
			if out.Err != nil {
				t.Fatalf("err %v", out.Err)
			}
			if got := names(client); got != tc.left || conflicts != 1 {
				t.Errorf("left %s after %d conflicts, want %s", got, conflicts, tc.left)
			}
			if tc.refused == "" && out.Refused != "" || !strings.Contains(out.Refused, tc.refused) {
				t.Errorf("refused %q, want %q", out.Refused, tc.refused)
			}
		})
	}
}
