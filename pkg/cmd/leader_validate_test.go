package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// The in-cluster flags are valid only with --watch (and the lease's only
// with --leader-elect), and the lease times must be ones client-go's
// elector accepts; each refusal is a usage error before any request.
func TestLeaderFlagErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	w := []string{"sync", "--all", "--watch"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sync", "--all", "--leader-elect"}, "--leader-elect is valid only with --watch"},
		{[]string{"sync", "--all", "--health-addr", ":8080"}, "--health-addr is valid only with --watch"},
		{[]string{"sync", "--all", "--leader-elect-resource-name", "x"}, "--leader-elect-resource-name is valid only with --watch"},
		{append(w, "--leader-elect-lease-duration", "30s"), "--leader-elect-lease-duration is valid only with --leader-elect"},
		{append(w, "--leader-elect-resource-namespace", "ops"), "--leader-elect-resource-namespace is valid only with --leader-elect"},
		{append(w, "--leader-elect", "--leader-elect-lease-duration", "10s"), "must be longer than --leader-elect-renew-deadline"},
		{append(w, "--leader-elect", "--leader-elect-retry-period", "9s"), "must be longer than 1.2 times --leader-elect-retry-period"},
		{append(w, "--leader-elect", "--leader-elect-retry-period", "0s"), "must be positive"},
		{append(w, "--leader-elect", "--leader-elect-resource-name", ""), "--leader-elect-resource-name must not be empty"},
		{append(w, "--health-addr", "8080"), "--health-addr must be HOST:PORT"},
	}
	for _, c := range cases {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q on one line", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}

func TestLeaderFlagsAccepted(t *testing.T) {
	on := map[string]bool{"leader-elect": true, "leader-elect-lease-duration": true, "health-addr": true}
	l := LeaderFlags{Elect: true, LeaseDuration: 15e9, RenewDeadline: 10e9, RetryPeriod: 2e9, Name: "kubectl-slices", HealthAddr: ":8080"}
	if err := l.Validate(func(n string) bool { return on[n] }, true); err != nil {
		t.Errorf("kube-controller-manager's defaults refused: %v", err)
	}
}
