package daemon

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/watch"
)

// verifyMetrics are the verifier's families: per target (a node, or a DNS
// replica as "namespace/name"), labelled kind="node"|"dns" and target.
type verifyMetrics struct {
	reg                  *prometheus.Registry
	status               *prometheus.GaugeVec // a state set: 1 for the status held, 0 for the others
	missing, extra, last *prometheus.GaugeVec
	unknown              *prometheus.GaugeVec // 1 with the UNKNOWN's class, while UNKNOWN
	execs, bytes         *prometheus.CounterVec
	rounds               prometheus.Counter
	roundSeconds         prometheus.Histogram
	targets              map[string]watch.Kind // the targets set last round, to delete those gone
	classes              map[string]string     // each target's UNKNOWN class last round ("" none)
}

var statuses = []verdict.Status{verdict.OK, verdict.Drift, verdict.Pending, verdict.Unknown}

func newVerifyMetrics() *verifyMetrics {
	const p = "kubectl_slices_dataplane_"
	target := []string{"kind", "target"}
	m := &verifyMetrics{reg: prometheus.NewRegistry(), targets: map[string]watch.Kind{},
		status: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: p + "status",
			Help: "The data plane's status per node and DNS replica as the last round found it: 1 for the status held (OK, DRIFT, PENDING, UNKNOWN), 0 for the others"},
			append(target, "status")),
		missing: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: p + "missing_endpoints",
			Help: "Endpoints (or DNS records) the EndpointSlices hold that the target does not serve, as the last round found"}, target),
		extra: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: p + "extra_endpoints",
			Help: "Endpoints (or DNS records) the target serves that the EndpointSlices do not hold, as the last round found"}, target),
		last: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: p + "last_verified_timestamp_seconds",
			Help: "When the target was last read (a tier or a question tried), in seconds since the epoch"}, target),
		unknown: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: p + "unknown_info",
			Help: "1 while the target is UNKNOWN, with why by class: forbidden, node-not-ready, no-proxy, unreadable"}, append(target, "class")),
		execs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: p + "execs_total",
			Help: "Execs into the node's service proxy Pod to read its rules"}, target),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: p + "read_bytes_total",
			Help: "Bytes the node's rule listings answered"}, target),
		rounds: prometheus.NewCounter(prometheus.CounterOpts{Name: p + "rounds_total", Help: "Rounds read and judged"}),
		roundSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: p + "round_duration_seconds",
			Help: "How long a round took to read every node and DNS replica and judge them", Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.status, m.missing, m.extra, m.last, m.unknown, m.execs, m.bytes, m.rounds, m.roundSeconds)
	return m
}

// set records a round's entries, read at readAt (seconds since the
// epoch), and forgets the targets the round did not see.
func (m *verifyMetrics) set(es []watch.Entry, readAt float64, took float64) {
	seen := map[string]watch.Kind{}
	seenClass := map[string]string{}
	for _, e := range es {
		k, t := string(e.Kind), e.Name
		seen[t] = e.Kind
		for _, s := range statuses {
			v := 0.0
			if s == e.Status {
				v = 1
			}
			m.status.WithLabelValues(k, t, string(s)).Set(v)
		}
		m.missing.WithLabelValues(k, t).Set(float64(e.Missing))
		m.extra.WithLabelValues(k, t).Set(float64(e.Extra))
		if e.Read {
			m.last.WithLabelValues(k, t).Set(readAt)
		}
		if e.Kind == watch.Node {
			m.execs.WithLabelValues(k, t).Add(float64(e.Execs))
			m.bytes.WithLabelValues(k, t).Add(float64(e.Bytes))
		}
		class := ""
		if e.Status == verdict.Unknown {
			class = e.Class
		}
		if prev := m.classes[t]; prev != "" && prev != class {
			m.unknown.DeleteLabelValues(k, t, prev)
		}
		if class != "" {
			m.unknown.WithLabelValues(k, t, class).Set(1)
		}
		seenClass[t] = class
	}
	for t, kind := range m.targets {
		if _, ok := seen[t]; ok {
			continue
		}
		l := prometheus.Labels{"kind": string(kind), "target": t}
		for _, v := range []*prometheus.GaugeVec{m.status, m.missing, m.extra, m.last, m.unknown} {
			v.DeletePartialMatch(l)
		}
		m.execs.DeletePartialMatch(l)
		m.bytes.DeletePartialMatch(l)
	}
	m.targets, m.classes = seen, seenClass
	m.rounds.Inc()
	m.roundSeconds.Observe(took)
}
