package controller

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	build "github.com/kubectl-slices/kubectl-slices/internal/testutil"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
)

func epSlice(name string, port int32, addrs ...string) *discovery.EndpointSlice {
	return build.NewSlice("shop", name).Port("", port, corev1.ProtocolTCP).Ready(addrs...).Build()
}

// Endpoints added and removed come from the slices rewritten, created and
// deleted, compared with what they were; the desired gauges are totals
// over Services, and a Service gone drops its share.
func TestMetricsPlanned(t *testing.T) {
	m := NewMetrics()
	liveA := epSlice("a", 80, "10.0.0.1", "10.0.0.2")
	plan := &reconcile.Plan{
		Update:    []*discovery.EndpointSlice{epSlice("a", 80, "10.0.0.1", "10.0.0.3")},
		Create:    []*discovery.EndpointSlice{epSlice("b", 80, "10.0.0.4")},
		Delete:    []*discovery.EndpointSlice{epSlice("c", 80, "10.0.0.5")},
		Unchanged: []*discovery.EndpointSlice{epSlice("d", 443, "10.0.0.6")},
	}
	plan.SetLive([]*discovery.EndpointSlice{liveA, plan.Delete[0], plan.Unchanged[0]})
	res := apply.Result{Created: plan.Create, Updated: plan.Update, Deleted: plan.Delete}
	m.Wrote(res)
	m.Result("success")
	m.Planned("shop/web", plan, res, 2)

	// Added: .3 and .4; removed: .2 and .5.
	checkHist(t, m, "kubectl_slices_endpoints_added_per_sync", 2)
	checkHist(t, m, "kubectl_slices_endpoints_removed_per_sync", 2)
	checkHist(t, m, "kubectl_slices_endpointslices_changed_per_sync", 3)
	for op, want := range map[string]float64{"create": 1, "update": 1, "delete": 1} {
		if got := testutil.ToFloat64(m.changes.WithLabelValues(op)); got != want {
			t.Errorf("changes{operation=%s} = %v, want %v", op, got, want)
		}
	}
	// Final: a (2 endpoints, port 80), b (1, port 80), d (1, port 443):
	// 4 endpoints, 3 slices; perfect packing at 2 per slice: ceil(3/2)+1 = 3.
	for name, want := range map[string]float64{"endpointsDesired": 4, "numSlices": 3, "slicesDesired": 3} {
		g := map[string]float64{"endpointsDesired": testutil.ToFloat64(m.endpointsDesired),
			"numSlices": testutil.ToFloat64(m.numSlices), "slicesDesired": testutil.ToFloat64(m.slicesDesired)}[name]
		if g != want {
			t.Errorf("%s = %v, want %v", name, g, want)
		}
	}
	m.Planned("shop/api", &reconcile.Plan{Unchanged: []*discovery.EndpointSlice{epSlice("e", 80, "10.0.1.1")}}, apply.Result{}, 2)
	if g := testutil.ToFloat64(m.endpointsDesired); g != 5 {
		t.Errorf("endpoints desired over two Services = %v, want 5", g)
	}
	m.Gone("shop/web")
	if g := testutil.ToFloat64(m.endpointsDesired); g != 1 {
		t.Errorf("endpoints desired after a Service is gone = %v, want 1", g)
	}
	if g := testutil.ToFloat64(m.syncs.WithLabelValues("success")); g != 1 {
		t.Errorf("syncs{result=success} = %v", g)
	}
	if age := m.lastAge(); age < 0 || age > 5 {
		t.Errorf("last successful sync age = %v", age)
	}
}

func checkHist(t *testing.T, m *Metrics, name string, sum float64) {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.Metric[0].Histogram
			if h.GetSampleCount() != 1 || h.GetSampleSum() != sum {
				t.Errorf("%s: %d samples summing to %v, want 1 summing to %v", name, h.GetSampleCount(), h.GetSampleSum(), sum)
			}
			return
		}
	}
	t.Errorf("%s not gathered", name)
}

// The controller records each sync by result and its writes by operation;
// a failed sync is an event on the Service, as upstream's.
func TestControllerRecordsSyncs(t *testing.T) {
	c, svc := testController(t)
	client := fake.NewClientset()
	n := 0
	client.PrependReactor("create", "endpointslices", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s := a.(k8stesting.CreateAction).GetObject().(*discovery.EndpointSlice)
		if s.Name == "" { // the fake server does not generate names
			n++
			s.Name = fmt.Sprintf("%s%d", s.GenerateName, n)
		}
		return false, nil, nil
	})
	c.client = client
	c.opts.Write = apply.Options{ManagedBy: "ours", DryRun: apply.DryRunNone}
	c.opts.Metrics = NewMetrics()
	events := record.NewFakeRecorder(10)
	c.opts.Events = events
	svc = svc.DeepCopy()
	svc.Spec.ClusterIP, svc.Spec.IPFamilies = "10.96.0.10", []corev1.IPFamily{corev1.IPv4Protocol}
	svc.Spec.Ports = []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}
	_ = c.cache.Services.Update(svc)
	pod := build.NewPod("shop", "web-1").Label("app", "web").IP("10.0.0.1").Build()
	_ = c.cache.Pods.Add(cached(pod))
	c.queue.Add("shop/web")
	if !c.processNext(context.Background()) {
		t.Fatal("queue shut down")
	}
	m := c.opts.Metrics
	if g := testutil.ToFloat64(m.changes.WithLabelValues("create")); g != 1 {
		t.Errorf("creates recorded: %v, want 1", g)
	}
	if g := testutil.ToFloat64(m.syncs.WithLabelValues("success")); g != 1 {
		t.Errorf("successful syncs: %v, want 1", g)
	}
	if g := testutil.ToFloat64(m.endpointsDesired); g != 1 {
		t.Errorf("endpoints desired: %v, want 1", g)
	}
	// A failing write: an error sync and a FailedToUpdateEndpointSlices event.
	boom := errors.New("boom")
	c.observe("shop/web", svc, syncer.Outcome{Err: boom})
	m.Result(result(boom))
	if g := testutil.ToFloat64(m.syncs.WithLabelValues("error")); g != 1 {
		t.Errorf("failed syncs: %v, want 1", g)
	}
	select {
	case e := <-events.Events:
		if want := "Warning FailedToUpdateEndpointSlices Error updating Endpoint Slices for Service shop/web: boom"; e != want {
			t.Errorf("event %q, want %q", e, want)
		}
	default:
		t.Error("no event for a failed sync")
	}
	// A cache behind our writes is "stale", with no event.
	c.observe("shop/web", svc, syncer.Outcome{Err: errStale})
	m.Result(result(errStale))
	if g := testutil.ToFloat64(m.syncs.WithLabelValues("stale")); g != 1 {
		t.Errorf("stale syncs: %v", g)
	}
	if len(events.Events) != 0 {
		t.Errorf("an event for a stale cache: %q", <-events.Events)
	}
}

// Every family the loop serves passes client_golang's linter, which
// flags what Prometheus' naming conventions forbid (a counter without
// _total, a unit not in base units).
func TestMetricsLint(t *testing.T) {
	m := NewMetrics()
	m.Result("success")
	m.SetLeader(true)
	problems, err := promlint.NewWithMetricFamilies(gather(t, m)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func gather(t *testing.T, m *Metrics) []*dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// The live heap is exposed beside the memstats: a long-running loop's slow
// leak shows in it before RSS, which moves with the GC's target.
func TestMetricsExposeTheLiveHeap(t *testing.T) {
	goruntime.GC()
	fams, err := NewMetrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "go_gc_heap_live_bytes" {
			if v := f.GetMetric()[0].GetGauge().GetValue(); v <= 0 {
				t.Fatalf("go_gc_heap_live_bytes = %v", v)
			}
			return
		}
	}
	t.Fatal("go_gc_heap_live_bytes not exposed")
}
