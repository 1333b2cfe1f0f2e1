package monitoring

import (
	"os"
	"strings"
	"testing"
)

// Every alert has a summary, a description, a severity, and a runbook_url
// whose section docs/runbook.md has.
func TestAlertsHaveRunbooks(t *testing.T) {
	page, err := os.ReadFile("../../docs/runbook.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, line := range strings.Split(string(page), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			sections[strings.ToLower(h)] = true
		}
	}
	n := 0
	for _, g := range Groups() {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			a := r.Annotations
			if a["summary"] == "" || a["description"] == "" || r.Labels["severity"] == "" || r.For == "" {
				t.Errorf("%s: summary %q, description %q, severity %q, for %q", r.Alert, a["summary"], a["description"], r.Labels["severity"], r.For)
			}
			anchor, ok := strings.CutPrefix(a["runbook_url"], Runbook+"#")
			if !ok || !sections[anchor] {
				t.Errorf("%s: runbook_url %q has no section in docs/runbook.md", r.Alert, a["runbook_url"])
			}
		}
	}
	if n < 7 {
		t.Errorf("%d alerts, want at least 7", n)
	}
}

// Every panel has a unit and queries that select the loop's job and the
// dashboard's namespace and pod variables.
func TestPanels(t *testing.T) {
	for _, p := range Panels() {
		if p.Unit == "" || len(p.Queries) == 0 {
			t.Errorf("%s: unit %q, %d queries", p.Title, p.Unit, len(p.Queries))
		}
		for _, q := range p.Queries {
			if !strings.Contains(q.Expr, sel) || q.Legend == "" {
				t.Errorf("%s: %q does not select %s, or has no legend", p.Title, q.Expr, sel)
			}
		}
	}
}
