package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// check, release and prune refuse bad input before any request.
func TestLifecycleUsageErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "svc/web"}, "unknown command"},
		{[]string{"check", "-o", "wide"}, "-o must be json or yaml"},
		{[]string{"check", "--max-endpoints-per-slice", "0"}, "between 1 and 1000"},
		{[]string{"release"}, "name at least one Service"},
		{[]string{"release", "deploy/web"}, "deploy/web is not a Service"},
		{[]string{"release", "svc/web", "--wait=soon"}, "--wait must be a positive duration"},
		{[]string{"release", "svc/web", "--wait=-1s"}, "--wait must be a positive duration"},
		{[]string{"release", "svc/web", "--dry-run", "later"}, `--dry-run must be "none", "client" or "server"`},
		{[]string{"release", "svc/web", "--managed-by", "endpointslice-controller.k8s.io"}, "must name kubectl-slices' own value"},
		{[]string{"release", "svc/web", "--managed-by", "endpoint-controller"}, "must name kubectl-slices' own value"},
		{[]string{"release", "svc/a", "-A"}, "cannot be named across all namespaces"},
		{[]string{"prune", "svc/web"}, "unknown command"},
		{[]string{"prune", "--dry-run", "later"}, `--dry-run must be "none", "client" or "server"`},
		{[]string{"prune", "--managed-by", "endpointslice-controller.k8s.io"}, "must not name kube-controller-manager's value"},
		{[]string{"prune", "--managed-by", "endpoint-controller"}, "must not name kube-controller-manager's value"},
	}
	for _, c := range cases {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q on one line", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}
