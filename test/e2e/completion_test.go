package e2e

import (
	"strings"
	"testing"
)

// kubectl completes the plugin's commands, flags and Service names through
// kubectl_complete-slices.
func TestCompletionThroughKubectl(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustService(t, shared, service(ns, "api"))

	r := kubectl(t, shared, "__complete", "slices", "").mustCode(t, 0)
	for _, want := range []string{"sync", "diff", "explain", "version"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("subcommands: %q lacks %s", r.Stdout, want)
		}
	}
	r = kubectl(t, shared, "__complete", "slices", "sync", "-n", ns, "svc/").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "svc/web") || !strings.Contains(r.Stdout, "svc/api") {
		t.Errorf("service names: %q", r.Stdout)
	}
	r = kubectl(t, shared, "__complete", "slices", "sync", "svc/web", "--dry-run", "").mustCode(t, 0)
	if !strings.Contains(r.Stdout, "server") || !strings.Contains(r.Stdout, "client") {
		t.Errorf("--dry-run values: %q", r.Stdout)
	}
}
