package kubemetrics

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/workqueue"
)

// A queue's adds, depth, retries and work are counted under its name.
func TestQueue(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "endpoint_slice", MetricsProvider: NewQueue(reg)})
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	q.Add("a") // coalesced: not an add
	want := map[string]float64{"workqueue_adds_total": 2, "workqueue_depth": 2}
	check(t, reg, want)
	item, _ := q.Get()
	q.Done(item)
	q.AddRateLimited("c")
	check(t, reg, map[string]float64{"workqueue_depth": 1, "workqueue_retries_total": 1, "workqueue_work_duration_seconds": 1, "workqueue_queue_duration_seconds": 1})
}

// The REST client's requests are counted by code, method and host, its
// latency by verb and host; the leader election's status by lease name.
func TestClientAndLeader(t *testing.T) {
	reg := prometheus.NewRegistry()
	Register(reg)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})
	_, _ = client.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{})
	if got := testutil.ToFloat64(requests.WithLabelValues("404", "GET", u.Host)); got != 1 {
		t.Errorf("rest_client_requests_total{code=404,method=GET,host=%s} = %v, want 1", u.Host, got)
	}
	if got := testutil.CollectAndCount(latency, "rest_client_request_duration_seconds"); got != 1 {
		t.Errorf("rest_client_request_duration_seconds series = %d, want 1", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lock := &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lease"},
		Client: fake.NewClientset().CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: "a"}}
	leading := make(chan struct{})
	done := make(chan struct{})
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{Lock: lock, Name: "test",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: time.Second, ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) { close(leading) }, OnStoppedLeading: func() { close(done) }}})
	if err != nil {
		t.Fatal(err)
	}
	// The elector sets the series to 0 when built, so a standby's is there.
	if got := testutil.CollectAndCount(leader, "leader_election_master_status"); got != 1 || testutil.ToFloat64(leader.WithLabelValues("test")) != 0 {
		t.Errorf("leader_election_master_status before leading: %d series, value %v; want one, 0", got, testutil.ToFloat64(leader.WithLabelValues("test")))
	}
	runCtx, stop := context.WithCancel(ctx)
	go le.Run(runCtx)
	select {
	case <-leading:
	case <-ctx.Done():
		t.Fatal("never led")
	}
	if got := testutil.ToFloat64(leader.WithLabelValues("test")); got != 1 {
		t.Errorf("leader_election_master_status{name=test} while leading = %v, want 1", got)
	}
	stop()
	<-done
}

// check compares each family's sum of samples (a histogram's count) with
// want.
func check(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "name" || l[0].GetValue() != "endpoint_slice" {
				t.Errorf("%s: labels %v, want name=endpoint_slice", mf.GetName(), l)
			}
			switch {
			case m.Counter != nil:
				got[mf.GetName()] += m.GetCounter().GetValue()
			case m.Gauge != nil:
				got[mf.GetName()] += m.GetGauge().GetValue()
			case m.Histogram != nil:
				got[mf.GetName()] += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %v, want %v", name, got[name], w)
		}
	}
}
