package promrecord

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func parse(t *testing.T, text string) Scrape {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return mf
}

// Each series has one value per scrape: stale where a scrape failed or
// lacked it after it had it, "_" (no sample) before it first appears and
// after the stale marker; up says which scrape failed; families outside
// the prefixes are left out; a histogram is its buckets, sum and count.
func TestSeries(t *testing.T) {
	first := parse(t, `# TYPE proxy_last gauge
proxy_last 100
# TYPE proxy_syncs counter
proxy_syncs{mode="iptables"} 3
# TYPE other gauge
other 1
`)
	third := parse(t, `# TYPE proxy_last gauge
proxy_last 130
# TYPE proxy_took_seconds histogram
proxy_took_seconds_bucket{le="1"} 2
proxy_took_seconds_bucket{le="+Inf"} 3
proxy_took_seconds_sum 4.5
proxy_took_seconds_count 3
`)
	got := map[string]string{}
	for _, s := range Series([]Target{{Labels: map[string]string{"job": "kube-proxy", "instance": "b"}, Scrapes: []Scrape{first, nil, third}}}, "proxy_") {
		got[s["series"]] = s["values"]
	}
	want := map[string]string{
		`proxy_last{instance="b",job="kube-proxy"}`:                          "100 stale 130",
		`proxy_syncs{instance="b",job="kube-proxy",mode="iptables"}`:         "3 stale _",
		`proxy_took_seconds_bucket{instance="b",job="kube-proxy",le="1"}`:    "_ _ 2",
		`proxy_took_seconds_bucket{instance="b",job="kube-proxy",le="+Inf"}`: "_ _ 3",
		`proxy_took_seconds_sum{instance="b",job="kube-proxy"}`:              "_ _ 4.5",
		`proxy_took_seconds_count{instance="b",job="kube-proxy"}`:            "_ _ 3",
		`up{instance="b",job="kube-proxy"}`:                                  "1 0 1",
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
}

// With promtool, a test over recorded series passes when the alert fires
// as expected and fails when it does not; the start timestamp sets the
// clock time() reads.
func TestRun(t *testing.T) {
	dir := os.Getenv("KUBECTL_SLICES_PROMTOOL")
	if dir == "" {
		t.Skip("KUBECTL_SLICES_PROMTOOL is not set: run make test, or set it to the folder hack/build-promtool.sh prints")
	}
	rules := t.TempDir() + "/rules.yaml"
	if err := os.WriteFile(rules, []byte(`groups:
- name: g
  rules:
  - alert: Old
    expr: time() - proxy_last > 60
    labels: {severity: warning}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_800_000_000, 0)
	last := func(v float64) Scrape {
		return parse(t, "# TYPE proxy_last gauge\nproxy_last "+strings.TrimSpace(strconvF(v))+"\n")
	}
	var scrapes []Scrape
	for i := 0; i < 10; i++ {
		scrapes = append(scrapes, last(1_800_000_000)) // never moves
	}
	series := Series([]Target{{Labels: map[string]string{"job": "p"}, Scrapes: scrapes}}, "proxy_")
	firing := []Firing{{Labels: map[string]string{"job": "p", "severity": "warning"}, Annotations: map[string]string{}}}
	for _, c := range []struct {
		eval   time.Duration
		firing []Firing
		ok     bool
	}{
		{60 * time.Second, nil, true},
		{75 * time.Second, firing, true},
		{75 * time.Second, nil, false},
		{45 * time.Second, firing, false},
	} {
		out, err := Test{Promtool: dir, Rules: rules, Start: start, Interval: 15 * time.Second, Series: series,
			Alerts: []Alert{{Name: "Old", EvalTime: c.eval, Firing: c.firing}}}.Run(context.Background(), t.TempDir())
		if (err == nil) != c.ok {
			t.Errorf("at %s with %d firing: %v, want passing %v\n%s", c.eval, len(c.firing), err, c.ok, out)
		}
	}
}

func strconvF(v float64) string { return model.SampleValue(v).String() }
