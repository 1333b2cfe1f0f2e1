package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// Usage errors are caught before any request: these run with no cluster.
func TestUsageErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sync"}, "name at least one Service"},
		{[]string{"sync", "deploy/web"}, "deploy/web is not a Service"},
		{[]string{"sync", "svc/web", "-l", "a=b"}, "not both"},
		{[]string{"sync", "-l", "a in (b"}, "invalid selector"},
		{[]string{"sync", "svc/web", "--max-endpoints-per-slice", "0"}, "between 1 and 1000"},
		{[]string{"sync", "svc/web", "--dry-run", "later"}, `--dry-run must be "none", "client" or "server"`},
		{[]string{"sync", "svc/web", "-o", "wide"}, "-o must be json, yaml or name"},
		{[]string{"sync", "svc/web", "--managed-by", "endpointslicemirroring-controller.k8s.io"}, "mirroring controller"},
		{[]string{"sync", "svc/web", "--managed-by", "endpoint-controller", "--with-endpoints"}, "Endpoints controller owns that value"},
		{[]string{"sync", "--all", "--watch", "--managed-by", "endpoint-controller", "--with-endpoints"}, "Endpoints controller owns that value"},
		{[]string{"sync", "svc/web", "--color", "pink"}, "--color must be auto, always or never"},
		{[]string{"diff"}, "name at least one Service"},
		{[]string{"explain", "svc/web", "--show-pods", "some"}, "--show-pods must be all or excluded"},
		{[]string{"explain", "svc/web", "--local"}, "--local and -f go together"},
		{[]string{"explain", "svc/a", "svc/b"}, "explain takes one Service, got 2"},
		{[]string{"explain", "svc", "a", "b"}, "explain takes one Service, got 2"},
		{[]string{"explain"}, "name the Service to explain: svc/NAME"},
		{[]string{"explain", "svc"}, "name the Service to explain: svc/NAME"},
		{[]string{"explain", "deploy/web"}, "deploy/web is not a Service"},
		{[]string{"sync", "svc/a", "-A"}, "cannot be named across all namespaces"},
		{[]string{"sync", "-l", "a=b", "--all"}, "-l and --all do not go together"},
		{[]string{"nonsense"}, "unknown command"},
	}
	for _, c := range cases {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q on one line", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}

// A usage error about a 70 KB value quotes its first 200 bytes and says
// how many more there were, on one line.
func TestHugeValuesClipped(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	v := strings.Repeat("a", 70_000)
	for _, args := range [][]string{
		{"sync", "svc/web", "--managed-by", v},
		{"sync", "-l", "app=" + v},
		{"sync", "--watch", "-l", "app=" + v},
		{"sync", "svc/" + v},
		{"explain", "pod/" + v},
		{"explain", "--ip", v},
		{"explain", "pod", "-l", "app=" + v},
		{"explain", "pod", "-l", v + "!"},
	} {
		_, errOut, code := runCmd(t, args...)
		if code != exit.Usage || len(errOut) > 700 || !strings.Contains(errOut, `"... (`) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%.40v: exit %d, %d bytes: %.400s", args, code, len(errOut), errOut)
		}
	}
}

func TestVersionClientOnly(t *testing.T) {
	out, _, code := runCmd(t, "version", "--client")
	if code != 0 || !strings.HasPrefix(out, "Client Version: ") {
		t.Errorf("%q %d", out, code)
	}
}
