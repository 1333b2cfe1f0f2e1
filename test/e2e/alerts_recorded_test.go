package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

// The families the rules read, from a scrape of the real binary.
var ruleFamilies = []string{"kubectl_slices_", "leader_election_", "workqueue_", "rest_client_"}

// servingAlert runs `promtool test rules` on one scrape of the loop's
// /metrics, each sample held for 20 minutes as if every scrape had read
// it, and expects KubectlSlicesServingServices to fire naming serving
// Services, or to stay silent when serving is 0. Skipped, saying so,
// without promtool (make test builds it).
func servingAlert(t *testing.T, mf map[string]*dto.MetricFamily, serving int, when string) {
	t.Helper()
	dir := os.Getenv("KUBECTL_SLICES_PROMTOOL")
	if dir == "" {
		t.Logf("%s: KUBECTL_SLICES_PROMTOOL is not set: the takeover alert is not tried on these samples", when)
		return
	}
	rules, err := filepath.Abs("../../monitoring/kubectl-slices.rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exp := []map[string]any{}
	if serving > 0 {
		exp = append(exp, map[string]any{
			"exp_labels": map[string]string{"severity": "warning", "namespace": "ops"},
			"exp_annotations": map[string]string{
				"summary":     "kube-controller-manager fails Services that kubectl-slices serves.",
				"description": fmt.Sprintf("The kubectl-slices loop in ops publishes %d Services whose endpoints kube-controller-manager has not published for more than --takeover-after.", serving),
				"runbook_url": "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md#kubectlslicesservingservices",
			},
		})
	}
	test := map[string]any{
		"rule_files":          []string{rules},
		"evaluation_interval": "1m",
		"tests": []map[string]any{{
			"interval":     "1m",
			"input_series": recordedSeries(mf, map[string]string{"job": "kubectl-slices", "namespace": "ops", "pod": "kubectl-slices-a"}),
			"alert_rule_test": []map[string]any{{
				"eval_time": "10m", "alertname": "KubectlSlicesServingServices", "exp_alerts": exp,
			}},
		}},
	}
	b, err := yaml.Marshal(test)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "recorded_test.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "promtool"), "test", "rules", file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: KubectlSlicesServingServices on the loop's samples (want %d Services named): %v\n%s", when, serving, err, out)
	}
	t.Logf("%s: KubectlSlicesServingServices on the loop's samples: %s", when, map[bool]string{true: fmt.Sprintf("fires, naming %d Services", serving), false: "silent"}[serving > 0])
}

// recordedSeries turns the rule families' samples into promtool input
// series, each with the target labels a scrape adds, held for 20 steps;
// and up at 1, as the scrape succeeded.
func recordedSeries(mf map[string]*dto.MetricFamily, target map[string]string) []map[string]string {
	var out []map[string]string
	add := func(name string, labels map[string]string, v float64) {
		all := map[string]string{}
		for k, v := range target {
			all[k] = v
		}
		for k, v := range labels {
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
		out = append(out, map[string]string{
			"series": name + "{" + strings.Join(parts, ",") + "}",
			"values": strconv.FormatFloat(v, 'g', -1, 64) + "x20",
		})
	}
	names := make([]string, 0, len(mf))
	for name := range mf {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !hasPrefix([]string{name}, ruleFamilies...) {
			continue
		}
		for _, m := range mf[name].Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.Counter != nil:
				add(name, labels, m.Counter.GetValue())
			case m.Gauge != nil:
				add(name, labels, m.Gauge.GetValue())
			case m.Histogram != nil:
				h := m.Histogram
				// The text parser keeps the +Inf bucket among the others.
				for _, b := range h.Bucket {
					bl := map[string]string{"le": strconv.FormatFloat(b.GetUpperBound(), 'g', -1, 64)}
					for k, v := range labels {
						bl[k] = v
					}
					add(name+"_bucket", bl, float64(b.GetCumulativeCount()))
				}
				add(name+"_sum", labels, h.GetSampleSum())
				add(name+"_count", labels, float64(h.GetSampleCount()))
			}
		}
	}
	add("up", nil, 1)
	return out
}
