package controller

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/kubemetrics"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
)

// metricPrefix replaces upstream's endpoint_slice_controller subsystem
// (k8s.io/endpointslice/metrics), so a dashboard translates by prefix.
const metricPrefix = "kubectl_slices_"

// Metrics are the loop's Prometheus metrics, on their own registry (with the
// Go and process collectors, and client-go's under kube-controller-manager's
// names), recorded by the controller around the pure planner, never inside
// it.
type Metrics struct {
	Registry *prometheus.Registry
	// Queue provides the work queue's workqueue_* families.
	Queue *kubemetrics.Queue

	endpointsAdded, endpointsRemoved prometheus.Histogram
	endpointsDesired, slicesDesired  prometheus.Gauge
	numSlices                        prometheus.Gauge
	slicesChanged                    prometheus.Histogram
	syncs, changes, plans            *prometheus.CounterVec
	lastSuccess                      prometheus.Gauge
	isLeader                         prometheus.Gauge
	synced                           prometheus.Gauge
	handback                         prometheus.Gauge
	states                           *prometheus.GaugeVec
	takeovers, handbacks             prometheus.Counter
	controllerLag                    prometheus.Histogram

	mu         sync.Mutex
	perService map[string]serviceCounts
	lastOK     time.Time
	now        func() time.Time
}

// serviceCounts are one Service's share of the desired gauges, which are
// totals over Services as upstream's metrics cache keeps them.
type serviceCounts struct{ endpoints, desiredSlices, slices int }

// NewMetrics registers every family on a new registry. It runs before the
// leader elector is built (kubemetrics.Register).
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	// The heap the last GC found live beside the memstats: RSS moves with
	// the heap's GC target, up to twice the live heap, so a slow leak shows
	// in this first.
	live := collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)}
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(live)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	kubemetrics.Register(reg)
	buckets := prometheus.ExponentialBuckets(2, 2, 15) // upstream's
	m := &Metrics{Registry: reg, Queue: kubemetrics.NewQueue(reg), perService: map[string]serviceCounts{}, now: time.Now,
		endpointsAdded: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricPrefix + "endpoints_added_per_sync",
			Help: "Number of endpoints added on each Service sync", Buckets: buckets}),
		endpointsRemoved: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricPrefix + "endpoints_removed_per_sync",
			Help: "Number of endpoints removed on each Service sync", Buckets: buckets}),
		endpointsDesired: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "endpoints_desired",
			Help: "Number of endpoints desired, over the Services synced"}),
		slicesDesired: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "desired_endpoint_slices",
			Help: "Number of EndpointSlices that would exist with perfect endpoint allocation"}),
		numSlices: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "num_endpoint_slices",
			Help: "Number of EndpointSlices of ours, as last planned"}),
		slicesChanged: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricPrefix + "endpointslices_changed_per_sync",
			Help: "Number of EndpointSlices changed on each Service sync"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricPrefix + "syncs_total",
			Help: "Number of Service syncs, by result: success, stale (the cache lagged our writes) or error"}, []string{"result"}),
		plans: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricPrefix + "plans_total",
			Help: "Number of Service plans, by path: memo (from the changed Pods alone) or full (from all the Service's Pods)"}, []string{"path"}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricPrefix + "changes_total",
			Help: "Number of EndpointSlice changes written, by operation: create, update or delete"}, []string{"operation"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "last_successful_sync_timestamp_seconds",
			Help: "Unix time of the last successful Service sync"}),
		isLeader: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "is_leader",
			Help: "1 while this process leads and writes; 0 while it stands by"}),
		synced: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "caches_synced",
			Help: "1 once the informers' caches have filled (the loop can judge the cluster); 0 before"}),
		handback: prometheus.NewGauge(prometheus.GaugeOpts{Name: metricPrefix + "services_controller_current",
			Help: "Number of Services whose kube-controller-manager slices exist and publish the same endpoints as ours (they can be handed back)"}),
		states: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricPrefix + "standby_services",
			Help: "With --standby: number of Services in each state (standby, serving, handing-back)"}, []string{"state"}),
		takeovers: prometheus.NewCounter(prometheus.CounterOpts{Name: metricPrefix + "takeovers_total",
			Help: "With --standby: Services taken over from kube-controller-manager after it failed them for --takeover-after"}),
		handbacks: prometheus.NewCounter(prometheus.CounterOpts{Name: metricPrefix + "handbacks_total",
			Help: "With --standby: Services handed back to kube-controller-manager (our slices deleted)"}),
		controllerLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: metricPrefix + "controller_lag_seconds",
			Help:    "With --standby: how old a difference between kube-controller-manager's slices and the desired ones was when its own write closed it, from when the loop observed the change that caused it",
			Buckets: []float64{0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 30, 60, 120, 300, 600}}),
	}
	reg.MustRegister(m.endpointsAdded, m.endpointsRemoved, m.endpointsDesired, m.slicesDesired, m.numSlices,
		m.slicesChanged, m.syncs, m.changes, m.plans, m.lastSuccess, m.isLeader, m.synced, m.handback,
		m.states, m.takeovers, m.handbacks, m.controllerLag)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: metricPrefix + "last_successful_sync_age_seconds",
		Help: "Seconds since the last successful Service sync (-1 before the first)"}, m.lastAge))
	// Every label value appears from the start, so a rate() has a zero to
	// start from.
	for _, r := range []string{"success", "stale", "error"} {
		m.syncs.WithLabelValues(r)
	}
	for _, op := range []string{"create", "update", "delete"} {
		m.changes.WithLabelValues(op)
	}
	for _, path := range []string{"memo", "full"} {
		m.plans.WithLabelValues(path)
	}
	for _, st := range standby.States {
		m.states.WithLabelValues(string(st))
	}
	return m
}

// SetStates records how many Services are in each standby state.
func (m *Metrics) SetStates(counts map[standby.State]int) {
	if m == nil {
		return
	}
	for _, st := range standby.States {
		m.states.WithLabelValues(string(st)).Set(float64(counts[st]))
	}
}

// TakenOver counts a takeover.
func (m *Metrics) TakenOver() {
	if m != nil {
		m.takeovers.Inc()
	}
}

// HandedBack counts a hand-back.
func (m *Metrics) HandedBack() {
	if m != nil {
		m.handbacks.Inc()
	}
}

// ControllerLag records how old a difference was when the controller
// closed it.
func (m *Metrics) ControllerLag(d time.Duration) {
	if m != nil {
		m.controllerLag.Observe(d.Seconds())
	}
}

func (m *Metrics) lastAge() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lastOK.IsZero() {
		return -1
	}
	return m.now().Sub(m.lastOK).Seconds()
}

// SetLeader records whether this process writes.
func (m *Metrics) SetLeader(leading bool) {
	if m == nil {
		return
	}
	v := 0.0
	if leading {
		v = 1
	}
	m.isLeader.Set(v)
}

// Synced records that the caches have filled.
func (m *Metrics) Synced() {
	if m != nil {
		m.synced.Set(1)
	}
}

// SetHandback records how many Services kube-controller-manager keeps current.
func (m *Metrics) SetHandback(n int) {
	if m != nil {
		m.handback.Set(float64(n))
	}
}

// PlannedBy counts one plan by its path: "memo" or "full".
func (m *Metrics) PlannedBy(path string) {
	if m != nil {
		m.plans.WithLabelValues(path).Inc()
	}
}

// Result counts one sync by its result: success, stale or error.
func (m *Metrics) Result(result string) {
	if m == nil {
		return
	}
	m.syncs.WithLabelValues(result).Inc()
	if result == "success" {
		m.mu.Lock()
		m.lastOK = m.now()
		m.mu.Unlock()
		m.lastSuccess.Set(float64(m.lastOK.UnixNano()) / 1e9)
	}
}

// Wrote counts the writes of one sync, also when it failed part way.
func (m *Metrics) Wrote(res apply.Result) {
	if m == nil {
		return
	}
	m.changes.WithLabelValues("create").Add(float64(len(res.Created)))
	m.changes.WithLabelValues("update").Add(float64(len(res.Updated)))
	m.changes.WithLabelValues("delete").Add(float64(len(res.Deleted)))
}

// Planned records a Service synced to its plan: the endpoints and slices
// changed, and the Service's share of the desired totals.
func (m *Metrics) Planned(key string, plan *reconcile.Plan, res apply.Result, maxPerSlice int) {
	if m == nil || plan == nil {
		return
	}
	added, gone := endpointDelta(plan)
	m.endpointsAdded.Observe(float64(added))
	m.endpointsRemoved.Observe(float64(gone))
	m.slicesChanged.Observe(float64(res.Writes()))
	m.mu.Lock()
	m.perService[key] = desiredCounts(plan, maxPerSlice)
	m.mu.Unlock()
	m.totals()
}

// Gone drops a deleted Service's share of the desired totals.
func (m *Metrics) Gone(key string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.perService, key)
	m.mu.Unlock()
	m.totals()
}

// totals sets the desired gauges under the lock: workers record at once,
// and a total summed before another worker's update must not be set after
// that worker's newer one.
func (m *Metrics) totals() {
	m.mu.Lock()
	defer m.mu.Unlock()
	var total serviceCounts
	for _, c := range m.perService {
		total.endpoints += c.endpoints
		total.desiredSlices += c.desiredSlices
		total.slices += c.slices
	}
	m.endpointsDesired.Set(float64(total.endpoints))
	m.slicesDesired.Set(float64(total.desiredSlices))
	m.numSlices.Set(float64(total.slices))
}

// endpointDelta counts the endpoints a plan adds and removes, comparing only
// the slices it rewrites or deletes with those it writes (unchanged slices
// cannot hold a change), keyed by port set and addresses as upstream keys
// them per port map.
func endpointDelta(plan *reconcile.Plan) (added, removed int) {
	var live []*discovery.EndpointSlice
	for _, s := range plan.Update {
		if l := plan.Live(s.Name); l != nil {
			live = append(live, l)
		}
	}
	before := endpointKeys(append(live, plan.Delete...))
	after := endpointKeys(append(append([]*discovery.EndpointSlice(nil), plan.Update...), plan.Create...))
	for k := range after {
		if !before[k] {
			added++
		}
	}
	for k := range before {
		if !after[k] {
			removed++
		}
	}
	return added, removed
}

func endpointKeys(slices []*discovery.EndpointSlice) map[string]bool {
	out := map[string]bool{}
	for _, s := range slices {
		ports := portsKey(s)
		for _, e := range s.Endpoints {
			out[ports+"|"+string(s.AddressType)+"|"+strings.Join(e.Addresses, ",")] = true
		}
	}
	return out
}

func portsKey(s *discovery.EndpointSlice) string {
	var p []string
	for _, port := range s.Ports {
		name, proto, num := "", "", int32(0)
		if port.Name != nil {
			name = *port.Name
		}
		if port.Protocol != nil {
			proto = string(*port.Protocol)
		}
		if port.Port != nil {
			num = *port.Port
		}
		p = append(p, fmt.Sprintf("%s/%s/%d", name, proto, num))
	}
	sort.Strings(p)
	return strings.Join(p, ",")
}

// desiredCounts: endpoints in the planned slices, the slices planned, and
// the slices a perfect packing would need (per port set and address type,
// ceil(endpoints/max)), as upstream's metrics cache computes them.
func desiredCounts(plan *reconcile.Plan, maxPerSlice int) serviceCounts {
	if maxPerSlice < 1 {
		maxPerSlice = reconcile.DefaultMaxEndpointsPerSlice
	}
	final := plan.Final()
	perGroup := map[string]int{}
	var c serviceCounts
	for _, s := range final {
		perGroup[portsKey(s)+"|"+string(s.AddressType)] += len(s.Endpoints)
		c.endpoints += len(s.Endpoints)
	}
	for _, n := range perGroup {
		c.desiredSlices += (n + maxPerSlice - 1) / maxPerSlice
	}
	c.slices = len(final)
	return c
}
