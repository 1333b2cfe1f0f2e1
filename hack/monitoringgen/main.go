// Command monitoringgen writes the loop's Prometheus rules and Grafana dashboard from
// pkg/monitoring into a directory (`make docs` writes monitoring/), for
// teams that run Prometheus without prometheus-operator.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-slices/kubectl-slices/pkg/monitoring"
)

func main() {
	out := flag.String("out", "monitoring", "the directory to write into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "monitoringgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	rules, err := monitoring.RulesFile(monitoring.Groups())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "kubectl-slices.rules.yaml"), rules, 0o644); err != nil {
		return err
	}
	dashboard, err := monitoring.Dashboard(monitoring.Panels())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "kubectl-slices.dashboard.json"), dashboard, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "dashboard.md"), monitoring.PanelsMarkdown(monitoring.Panels()), 0o644)
}
