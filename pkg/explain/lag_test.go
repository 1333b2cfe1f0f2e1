package explain

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// How long the controller has been behind is dated from the change behind
// the earliest open difference, and worded from the Pod.
func TestControllerBehind(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	good1, good2 := ep("10.0.0.1", "web-1", true), ep("10.0.0.2", "web-2", true)
	for _, tc := range []struct {
		name string
		// web-2 turned not ready this long ago (0: still ready).
		notReadyFor time.Duration
		live        []*discovery.EndpointSlice
		want        string // Text(); "" for nil
	}{
		{"current", 0, []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1, good2)}, ""},
		{"no controller slices", 0, []*discovery.EndpointSlice{liveSlice("a", ours, 8080, good1, good2)}, ""},
		{"still published ready", 133 * time.Second, []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1, good2)},
			"has been behind for 2m13s: pod web-2 became not ready and is still published ready"},
		{"not published", 0, []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1)},
			"is behind: pod web-2 is ready and is not published"},
		{"gone and published", 0, []*discovery.EndpointSlice{liveSlice("k", kcm, 8080, good1, good2, ep("10.0.0.3", "web-3", true))},
			"is behind: pod web-3 is still published but no longer desired"},
		{"another Service's slices", 0, []*discovery.EndpointSlice{ownedBy(liveSlice("k", kcm, 8080, good1), "old-uid")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := setup(tc.live...)
			if tc.notReadyFor > 0 {
				p := in.Pods[1].DeepCopy()
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-tc.notReadyFor))}}
				in.Pods = append(in.Pods[:1:1], p)
			}
			in2, plan := setupFrom(in)
			b := judge.ControllerBehind(in2, plan, kcm, now)
			got := ""
			if b != nil {
				got = b.Text()
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if judge.ControllerBehind(in2, plan, kcm, time.Time{}) != nil {
				t.Error("judged without a clock")
			}
		})
	}
}

// ownedBy makes s another Service's (one deleted under the same name).
func ownedBy(s *discovery.EndpointSlice, uid string) *discovery.EndpointSlice {
	s.OwnerReferences[0].UID = types.UID(uid)
	return s
}

// setupFrom plans an input setup made and a test changed.
func setupFrom(in reconcile.Input) (reconcile.Input, *reconcile.Plan) {
	plan, err := reconcile.Compute(in, reconcile.DefaultOptions())
	if err != nil {
		panic(err)
	}
	return in, plan
}

// Build reports the lag in explain's diagnosis and report.
func TestBuildReportsControllerBehind(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	in, _ := setup(liveSlice("k", kcm, 8080, ep("10.0.0.1", "web-1", true)))
	in, plan := setupFrom(in)
	r := Build(in, plan, Options{ManagedBy: ours, Now: now})
	if r.ControllerBehind == nil || !strings.Contains(r.Diagnosis.Summary, "kube-controller-manager is behind: pod web-2 is ready and is not published") {
		t.Fatalf("diagnosis %q, behind %+v", r.Diagnosis.Summary, r.ControllerBehind)
	}
}
