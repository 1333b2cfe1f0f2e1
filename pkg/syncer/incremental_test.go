package syncer

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// fakeIncremental plans with Compute from a full read, or refuses, and
// records what Sync asked and told it.
type fakeIncremental struct {
	src     Source
	refuse  bool
	asked   int
	po      reconcile.Options
	written *apply.Result
}

func (f *fakeIncremental) Changes(context.Context, *corev1.Service) (Changes, bool, error) {
	f.asked++
	return Changes{}, true, nil
}

func (f *fakeIncremental) Plan(svc *corev1.Service, _ Changes, po reconcile.Options) (*reconcile.Plan, bool) {
	f.po = po
	if f.refuse {
		return nil, false
	}
	in, _ := f.src.Load(context.Background(), svc)
	plan, err := reconcile.Compute(in, po)
	return plan, err == nil
}

func (f *fakeIncremental) Written(res apply.Result, err error) {
	if err == nil {
		f.written = &res
	}
}

// An incremental plan is made under the kind's managed-by value and the
// trigger time Changed gives, recorded only once the plan is taken, and
// written by Sync's writer, which tells the planner what it wrote. One that
// refuses is planned in full; with Hold, which judges a full read, it is
// not asked.
func TestSyncIncremental(t *testing.T) {
	changedAt := t0.Add(3 * time.Hour)
	for _, tc := range []struct {
		name             string
		refuse, hold     bool
		wantIncremental  bool
		wantCommit, full int
	}{
		{name: "planned", wantIncremental: true, wantCommit: 1},
		{name: "refused", refuse: true, full: 1},
		{name: "beside a hold", hold: true, full: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := testService()
			client := fake.NewClientset(svc, testPod("web-1", "10.1.0.1", t0.Add(time.Hour)), testutil.NewNode("n1").Build())
			reader := cluster.Reader{Client: client}
			inc := &fakeIncremental{src: reader, refuse: tc.refuse}
			commits, full := 0, 0
			opts := Options{Plan: reconcile.DefaultOptions(), Write: ourWrite, Incremental: inc,
				Changed: func(*corev1.Service, map[string]*corev1.Pod) (time.Time, func(), bool) {
					return changedAt, func() { commits++ }, true
				},
				Planner: func(ctx context.Context, in reconcile.Input, po reconcile.Options) (*reconcile.Plan, error) {
					full++
					return judge.PlanService(ctx, nil, in, po)
				},
			}
			if tc.hold {
				opts.Hold = func(reconcile.Input, *reconcile.Plan) string { return "" }
			}
			out := Sync(context.Background(), reader, client.DiscoveryV1(), svc, opts)
			if out.Err != nil || out.Incremental != tc.wantIncremental || commits != tc.wantCommit || full != tc.full {
				t.Fatalf("err %v, incremental %v, %d commits, %d full plans; want %v, %d, %d",
					out.Err, out.Incremental, commits, full, tc.wantIncremental, tc.wantCommit, tc.full)
			}
			if tc.hold && inc.asked != 0 {
				t.Errorf("asked %d times beside a hold", inc.asked)
			}
			if !tc.wantIncremental {
				return
			}
			if inc.po.ManagedBy != reconcile.DefaultManagedBy || !inc.po.TriggerTime.Equal(changedAt) {
				t.Errorf("planned under %q at %v", inc.po.ManagedBy, inc.po.TriggerTime)
			}
			if inc.written == nil || len(inc.written.Created) != 1 {
				t.Fatalf("told it wrote %+v, want the one slice created", inc.written)
			}
			if got := inc.written.Created[0].Annotations[corev1.EndpointsLastChangeTriggerTime]; got != changedAt.Format(time.RFC3339Nano) {
				t.Errorf("written with trigger time %q", got)
			}
		})
	}
}
