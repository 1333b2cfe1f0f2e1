package promrecord

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

// Scrape is one read of a target's /metrics; nil when it failed.
type Scrape map[string]*dto.MetricFamily

// Target is a scraped process: the labels a scrape adds (job, instance,
// ...) and its scrapes, in order, one per interval.
type Target struct {
	Labels  map[string]string
	Scrapes []Scrape
}

// Series are the promtool input series of the families whose names start
// with one of prefixes: one value per scrape, and up (1, or 0 for a failed
// scrape). Where a scrape failed or lacked a series it had before, the
// series is marked stale, as Prometheus marks it at once (promtool would
// otherwise see the last value for five minutes more), and has no sample
// ("_") after that. A histogram is its _bucket, _sum and _count series; a
// summary is left out (no rule here reads one).
func Series(targets []Target, prefixes ...string) []map[string]string {
	var out []map[string]string
	for _, tg := range targets {
		values := map[string][]string{} // by series, one per scrape
		var order []string
		for i, sc := range tg.Scrapes {
			set := func(name string, labels map[string]string, v float64) {
				key := seriesName(name, tg.Labels, labels)
				if _, ok := values[key]; !ok {
					order = append(order, key)
					values[key] = make([]string, len(tg.Scrapes))
					for j := range values[key] {
						values[key][j] = "_"
					}
				}
				values[key][i] = strconv.FormatFloat(v, 'g', -1, 64)
			}
			up := 0.0
			if sc != nil {
				up = 1
				samples(sc, prefixes, set)
			}
			set("up", nil, up)
		}
		sort.Strings(order)
		for _, key := range order {
			vs := values[key]
			for i := len(vs) - 1; i > 0; i-- {
				if vs[i] == "_" && vs[i-1] != "_" {
					vs[i] = "stale"
				}
			}
			out = append(out, map[string]string{"series": key, "values": strings.Join(vs, " ")})
		}
	}
	return out
}

// samples calls set for every sample of the families named with a prefix.
func samples(sc Scrape, prefixes []string, set func(name string, labels map[string]string, v float64)) {
	for name, mf := range sc {
		if !hasPrefix(name, prefixes) {
			continue
		}
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Counter != nil:
				set(name, labels, m.Counter.GetValue())
			case m.Gauge != nil:
				set(name, labels, m.Gauge.GetValue())
			case m.Untyped != nil:
				set(name, labels, m.Untyped.GetValue())
			case m.Histogram != nil:
				h := m.Histogram
				// The text parser keeps the +Inf bucket among the others.
				for _, b := range h.Bucket {
					bl := map[string]string{"le": strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)}
					for k, v := range labels {
						bl[k] = v
					}
					set(name+"_bucket", bl, float64(b.GetCumulativeCount()))
				}
				set(name+"_sum", labels, h.GetSampleSum())
				set(name+"_count", labels, float64(h.GetSampleCount()))
			}
		}
	}
}

func hasPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// seriesName is name{labels} in PromQL's series notation, labels sorted;
// the target's labels and the sample's are expected not to share a name.
func seriesName(name string, target, own map[string]string) string {
	all := map[string]string{}
	for k, v := range target {
		all[k] = v
	}
	for k, v := range own {
		all[k] = v
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.Quote(all[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// Alert is an alert_rule_test case: the alerts expected firing (labels
// besides alertname, and annotations) when the rules are evaluated at
// EvalTime after the start.
type Alert struct {
	Name     string
	EvalTime time.Duration
	Firing   []Firing
}

// Firing is one alert expected to fire.
type Firing struct {
	Labels, Annotations map[string]string
}

// Test is a promtool rules unit test over recorded series.
type Test struct {
	// Promtool is the folder holding promtool (KUBECTL_SLICES_PROMTOOL).
	Promtool string
	// Rules is the rule file under test.
	Rules string
	// Start is the first scrape's time, a whole second (promtool takes
	// whole seconds; zero: promtool's epoch).
	Start time.Time
	// Interval is the time between scrapes, and between evaluations.
	Interval time.Duration
	Series   []map[string]string
	Alerts   []Alert
}

// Run writes the test file into dir and runs promtool test rules on it,
// returning promtool's output; an error when a case failed.
func (t Test) Run(ctx context.Context, dir string) ([]byte, error) {
	rules, err := filepath.Abs(t.Rules)
	if err != nil {
		return nil, err
	}
	group := map[string]any{
		"interval":     seconds(t.Interval),
		"input_series": t.Series,
	}
	if !t.Start.IsZero() {
		group["start_timestamp"] = strconv.FormatInt(t.Start.Unix(), 10)
	}
	var cases []map[string]any
	for _, a := range t.Alerts {
		exp := []map[string]any{}
		for _, f := range a.Firing {
			exp = append(exp, map[string]any{"exp_labels": f.Labels, "exp_annotations": f.Annotations})
		}
		cases = append(cases, map[string]any{"eval_time": seconds(a.EvalTime), "alertname": a.Name, "exp_alerts": exp})
	}
	group["alert_rule_test"] = cases
	b, err := yaml.Marshal(map[string]any{
		"rule_files":          []string{rules},
		"evaluation_interval": seconds(t.Interval),
		"tests":               []map[string]any{group},
	})
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "recorded_test.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, err
	}
	out, err := exec.CommandContext(ctx, filepath.Join(t.Promtool, "promtool"), "test", "rules", file).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("promtool test rules: %w", err)
	}
	return out, nil
}

// seconds is d in Prometheus' duration notation, in whole seconds.
func seconds(d time.Duration) string { return fmt.Sprintf("%ds", int64(d/time.Second)) }
