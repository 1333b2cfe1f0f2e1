package kubemetrics

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/metrics"
)

// clientBuckets are component-base's for the REST client's latencies.
var clientBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0}

// The process-wide families: client-go calls one set of hooks per process.
var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rest_client_requests_total",
		Help: "Number of HTTP requests, partitioned by status code, method, and host."}, []string{"code", "method", "host"})
	latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rest_client_request_duration_seconds",
		Help: "Request latency in seconds. Broken down by verb, and host.", Buckets: clientBuckets}, []string{"verb", "host"})
	limiter = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rest_client_rate_limiter_duration_seconds",
		Help: "Client side rate limiter latency in seconds. Broken down by verb, and host.", Buckets: clientBuckets}, []string{"verb", "host"})
	leader = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "leader_election_master_status",
		Help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name."}, []string{"name"})
	slowpath = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leader_election_slowpath_total",
		Help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name."}, []string{"name"})

	hooks sync.Once
)

// Register adds the REST client's and the leader election's families to
// reg, and hands client-go their hooks the first time in the process. It
// must run before a leader elector is built: one built earlier keeps
// client-go's no-op metric.
func Register(reg prometheus.Registerer) {
	hooks.Do(func() {
		metrics.Register(metrics.RegisterOpts{
			RequestResult:      result{},
			RequestLatency:     observer{latency},
			RateLimiterLatency: observer{limiter},
		})
		leaderelection.SetProvider(leaderProvider{})
	})
	reg.MustRegister(requests, latency, limiter, leader, slowpath)
}

type result struct{}

func (result) Increment(_ context.Context, code, method, host string) {
	requests.WithLabelValues(code, method, host).Inc()
}

type observer struct{ h *prometheus.HistogramVec }

func (o observer) Observe(_ context.Context, verb string, u url.URL, d time.Duration) {
	o.h.WithLabelValues(verb, u.Host).Observe(d.Seconds())
}

type leaderProvider struct{}

func (leaderProvider) NewLeaderMetric() leaderelection.LeaderMetric { return leaderMetric{} }

// leaderMetric: the elector calls Off when built, which also makes the
// slow path counter's series, at 0, so that a rate() has a start.
type leaderMetric struct{}

func (leaderMetric) On(name string) { leader.WithLabelValues(name).Set(1) }

func (leaderMetric) Off(name string) {
	leader.WithLabelValues(name).Set(0)
	slowpath.WithLabelValues(name)
}

func (leaderMetric) SlowpathExercised(name string) { slowpath.WithLabelValues(name).Inc() }
