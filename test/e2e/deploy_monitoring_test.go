package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// operatorModule holds prometheus-operator's CRDs (example/prometheus-operator-crd).
const operatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// `deploy --monitoring`'s PodMonitor and PrometheusRule pass the real API
// server's validation of prometheus-operator's CRDs (server-side dry run,
// strict fields); without --monitoring the output is what it was.
func TestDeployMonitoring(t *testing.T) {
	crds := operatorCRDs(t, "podmonitors", "prometheusrules")
	kubectl(t, shared, "apply", "--server-side", "--force-conflicts", "-f", crds[0], "-f", crds[1]).mustCode(t, 0)
	t.Cleanup(func() {
		kubectl(t, shared, "delete", "--ignore-not-found", "-f", crds[0], "-f", crds[1])
	})
	kubectl(t, shared, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/podmonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com").mustCode(t, 0)

	plain := deployObjects(t, shared)
	with := deployObjects(t, shared, "--monitoring")
	if len(with) != len(plain)+2 {
		t.Fatalf("--monitoring printed %d objects, want %d", len(with), len(plain)+2)
	}
	for i, o := range plain {
		a, _ := json.Marshal(o.Object)
		b, _ := json.Marshal(with[i].Object)
		if string(a) != string(b) {
			t.Errorf("object %d (%s %s) differs with --monitoring", i, o.GetKind(), o.GetName())
		}
	}
	mon := ofKinds(with, "PodMonitor", "PrometheusRule")
	if len(mon) != 2 {
		t.Fatalf("--monitoring: %d of PodMonitor and PrometheusRule", len(mon))
	}
	// Into the namespace deploy names, which the dry run cannot create.
	ns := newNamespace(t, shared)
	for i := range mon {
		mon[i].SetNamespace(ns)
	}
	r := kubectl(t, shared, "apply", "--dry-run=server", "--validate=strict", "-f", manifestFile(t, mon))
	if r.Code != 0 || !strings.Contains(r.Stdout, "podmonitor.monitoring.coreos.com/kubectl-slices created (server dry run)") ||
		!strings.Contains(r.Stdout, "prometheusrule.monitoring.coreos.com/kubectl-slices created (server dry run)") {
		t.Fatalf("server-side dry run of the PodMonitor and PrometheusRule: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// operatorCRDs returns the CRD files of the named resources from
// prometheus-operator's module, fetched from the Go module proxy once.
func operatorCRDs(t *testing.T, resources ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", operatorModule)
	cmd.Dir = t.TempDir() // outside any module
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", operatorModule, err, out)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v\n%s", operatorModule, err, out)
	}
	var files []string
	for _, r := range resources {
		files = append(files, filepath.Join(mod.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_"+r+".yaml"))
	}
	return files
}
