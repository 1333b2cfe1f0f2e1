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

// The plugin's own __complete, reached through kubectl's plugin dispatch,
// lists the namespace's Services from the API server, as svc/NAME and, after
// a bare prefix or "svc", as NAME; names already given are not repeated.
func TestCompleteServicesFromAPIServer(t *testing.T) {
	ns := newNamespace(t, shared)
	for _, name := range []string{"web", "api", "worker"} {
		mustService(t, shared, service(ns, name))
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"sync", "-n", ns, "svc/"}, []string{"svc/api", "svc/web", "svc/worker"}},
		{[]string{"diff", "-n", ns, "w"}, []string{"web", "worker"}},
		{[]string{"verify", "-n", ns, "svc/w"}, []string{"svc/web", "svc/worker"}},
		{[]string{"verify", "-n", ns, "svc/web", "-o", ""}, []string{"json", "yaml"}},
		{[]string{"sync", "-n", ns, "svc", ""}, []string{"api", "web", "worker"}},
		{[]string{"sync", "-n", ns, "svc/web", "svc/"}, []string{"svc/api", "svc/worker"}},
		{[]string{"explain", "-n", ns, "svc/web", ""}, nil},
		{[]string{"sync", "-A", "svc/"}, nil}, // names are refused with -A
	}
	for _, c := range cases {
		r := slices(t, append([]string{"__complete"}, c.args...)...).mustCode(t, 0)
		if got := completions(r.Stdout); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("__complete %v: %v, want %v", c.args, got, c.want)
		}
	}
	r := slices(t, "__complete", "sync", "-n", "").mustCode(t, 0)
	if got := completions(r.Stdout); !contains(got, ns) || !contains(got, "kube-system") {
		t.Errorf("-n: %v lacks %s and kube-system", got, ns)
	}
}

// completions are the candidates of cobra's __complete output: one per
// line, before the ":DIRECTIVE" line, descriptions after a tab dropped.
func completions(out string) []string {
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" || strings.HasPrefix(line, ":") {
			continue
		}
		got = append(got, strings.SplitN(line, "\t", 2)[0])
	}
	return got
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
