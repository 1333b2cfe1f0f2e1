package e2e

import (
	"bufio"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
)

// The built binary's /metrics, as a leader serves it after syncing: every
// family passes client_golang's linter, the families are the ones
// docs/monitoring.md lists, and the families kube-controller-manager's
// dashboards query carry the labels they query by.
func TestMetricsServed(t *testing.T) {
	ns := newNamespace(t, shared)
	app := "metrics-" + ns
	mustService(t, shared, service(ns, "web", func(s *corev1.Service) {
		s.Labels = map[string]string{"app": app}
		s.Spec.Selector = map[string]string{"app": app}
	}))
	s := podSpec(app, 0, 45)
	mustPods(t, shared, ns, s)
	r := startReplica(t, shared, shared.Kubeconfig, ns, app)
	r.waitLine(t, "leading: writing from now on", 20*time.Second)
	within(t, "the leader wrote the Service's slice", 10*time.Second, func() bool { return r.writes(t) >= 1 })
	mf := r.metrics(t)

	families := make([]*dto.MetricFamily, 0, len(mf))
	for _, f := range mf {
		families = append(families, f)
	}
	problems, err := promlint.NewWithMetricFamilies(families).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}

	documented := documentedMetrics(t, loopMetrics)
	var served []string
	for name := range mf {
		served = append(served, name)
	}
	sort.Strings(served)
	for _, name := range served {
		if !documented.has(name) {
			t.Errorf("/metrics serves %s, which docs/monitoring.md does not list", name)
		}
	}
	for _, name := range documented.names {
		if _, ok := mf[name]; !ok {
			t.Errorf("docs/monitoring.md lists %s, which /metrics does not serve", name)
		}
	}
	for _, prefix := range documented.prefixes {
		if !hasPrefix(served, prefix) {
			t.Errorf("docs/monitoring.md lists %s*, and /metrics serves no such family", prefix)
		}
	}

	// The alerts' tests (and so the rules they fire) and the dashboard's
	// queries name only families the binary serves, kube-proxy's own, and up.
	for _, name := range append(metricNames(t, "../monitoring/alerts_test.yaml", seriesLine), metricNames(t, "../../monitoring/kubectl-slices.dashboard.json", selectorName)...) {
		base := name
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && mf[b] != nil && mf[b].GetType() == dto.MetricType_HISTOGRAM {
				base = b
			}
		}
		// The verifier's are held to its own /metrics (TestVerifyWatchRounds).
		if _, ok := mf[base]; !ok && name != "up" && !strings.HasPrefix(name, "kubeproxy_") && !strings.HasPrefix(name, verifierPrefix) {
			t.Errorf("the alerts' tests or the dashboard name %s, which /metrics does not serve", name)
		}
	}

	// The labels kubernetes-mixin's controller-manager dashboard and
	// client-go's conventions query by.
	for _, q := range []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"workqueue_adds_total", map[string]string{"name": "endpoint_slice"}, 1},
		{"workqueue_depth", map[string]string{"name": "endpoint_slice"}, 0},
		{"workqueue_queue_duration_seconds", map[string]string{"name": "endpoint_slice"}, 1},
		{"workqueue_work_duration_seconds", map[string]string{"name": "endpoint_slice"}, 1},
		{"rest_client_requests_total", map[string]string{"code": "200", "method": "GET"}, 1},
		{"rest_client_requests_total", map[string]string{"code": "201", "method": "POST"}, 1},
		{"rest_client_request_duration_seconds", map[string]string{"verb": "GET"}, 1},
		{"leader_election_master_status", map[string]string{"name": "kubectl-slices"}, 1},
		{"kubectl_slices_caches_synced", nil, 1},
	} {
		// A sync's work duration is observed when the worker is done, a
		// moment after its write is counted: poll, for up to 5 s.
		var n float64
		var found bool
		deadline := time.Now().Add(5 * time.Second)
		for {
			n, found = samples(r.metrics(t), q.name, q.labels)
			if (found && n >= q.min) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		ok := found && n >= q.min
		if !ok {
			t.Errorf("%s%v: found %v, value or count %v, want at least %v", q.name, q.labels, found, n, q.min)
		}
	}
}

// metricNames are the metric names re's first group finds in a file: the
// promtool tests' input series (seriesLine), the dashboard's selectors
// (selectorName, each written name{…}).
func metricNames(t *testing.T, path string, re *regexp.Regexp) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("%s names no metric", path)
	}
	return names
}

var selectorName = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)

var seriesLine = regexp.MustCompile(`(?m)^\s*- series: '([a-zA-Z_:][a-zA-Z0-9_:]*)`)

// samples sums a family's values (a histogram's counts) over the series
// whose labels include want, and says whether any matched.
func samples(mf map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := mf[name]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
outer:
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue outer
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// metricList is docs/monitoring.md's table: whole names, and prefixes
// (a row `go_*`).
type metricList struct{ names, prefixes []string }

func (l metricList) has(name string) bool {
	for _, n := range l.names {
		if n == name {
			return true
		}
	}
	return hasPrefix([]string{name}, l.prefixes...)
}

func hasPrefix(names []string, prefixes ...string) bool {
	for _, n := range names {
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				return true
			}
		}
	}
	return false
}

var metricRow = regexp.MustCompile("^\\| `([a-z_:]+)(\\*?)` \\|")

// The sections of docs/monitoring.md that list a process's metrics.
const (
	loopMetrics     = "## Every metric"
	verifierMetrics = "## The verifier's metrics"
)

// verifierPrefix starts the verifier's own families' names.
const verifierPrefix = "kubectl_slices_dataplane_"

// documentedMetrics are the metrics docs/monitoring.md's section lists.
func documentedMetrics(t *testing.T, section string) metricList {
	t.Helper()
	f, err := os.Open("../../docs/monitoring.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var l metricList
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "## ") {
			in = sc.Text() == section
		}
		m := metricRow.FindStringSubmatch(sc.Text())
		switch {
		case m == nil || !in:
		case m[2] == "*":
			l.prefixes = append(l.prefixes, m[1])
		default:
			l.names = append(l.names, m[1])
		}
	}
	if len(l.names) == 0 {
		t.Fatalf("docs/monitoring.md lists no metric under %q", section)
	}
	return l
}
