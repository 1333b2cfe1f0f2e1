package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

const rules = "../../monitoring/kubectl-slices.rules.yaml"

// promtool returns the built promtool, or skips (saying how) outside make
// test.
func promtool(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBECTL_SLICES_PROMTOOL")
	if dir == "" {
		t.Skip("KUBECTL_SLICES_PROMTOOL is not set: run make test, or set it to the folder hack/build-promtool.sh prints")
	}
	return filepath.Join(dir, "promtool")
}

func run(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, promtool(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// The generated rules parse, and promtool's linter finds nothing.
func TestCheckRules(t *testing.T) {
	run(t, "check", "rules", "--lint=all", "--lint-fatal", rules)
}

// Every alert fires on its firing case and stays silent on its silent one
// (alerts_test.yaml).
func TestAlerts(t *testing.T) {
	run(t, "test", "rules", "alerts_test.yaml")
}

// Every alert of the rules has a case where it fires and one where it
// must not, at a time after its for: period.
func TestEveryAlertHasBothCases(t *testing.T) {
	var rf struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
			} `json:"rules"`
		} `json:"groups"`
	}
	var tf struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string            `json:"alertname"`
				ExpAlerts []json.RawMessage `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	load(t, rules, &rf)
	load(t, "alerts_test.yaml", &tf)
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tf.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	n := 0
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if !fires[r.Alert] || !silent[r.Alert] {
				t.Errorf("%s: a firing case %v, a silent case %v; want both", r.Alert, fires[r.Alert], silent[r.Alert])
			}
		}
	}
	if n == 0 {
		t.Fatal("the rules have no alert")
	}
}

func load(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Every query of the dashboard parses as PromQL: promtool checks them as
// recording rules, the dashboard's variables given values.
func TestDashboardQueriesParse(t *testing.T) {
	exprs := DashboardQueries(t)
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rs []rule
	vars := strings.NewReplacer("$namespace", "ops", "$pod", ".*")
	for i, e := range exprs {
		rs = append(rs, rule{Record: fmt.Sprintf("dashboard:query_%d:check", i), Expr: vars.Replace(e)})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rs}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard.rules.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "check", "rules", file)
}

// DashboardQueries are the PromQL expressions of the generated dashboard's
// panels.
func DashboardQueries(t testing.TB) []string {
	t.Helper()
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	b, err := os.ReadFile("../../monitoring/kubectl-slices.dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	if len(out) == 0 {
		t.Fatal("the dashboard has no query")
	}
	return out
}
