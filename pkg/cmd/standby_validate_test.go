package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// --standby belongs to the watch loop, and its durations to --standby; each
// refusal is a one-line usage error before any request.
func TestStandbyFlagErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	w := []string{"sync", "--all", "--watch"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sync", "--all", "--standby"}, "--standby stands by beside kube-controller-manager in the watch loop: add --watch"},
		{append(w, "--takeover-after", "3s"), "add --standby"},
		{append(w, "--handback-hold", "3s"), "add --standby"},
		{append(w, "--standby", "--takeover-after", "0s"), "--takeover-after must be positive"},
		{append(w, "--standby", "--handback-hold", "-1s"), "--handback-hold not negative"},
		{append(w, "--standby", "--managed-by", "endpointslice-controller.k8s.io", "--force"), "is its own value"},
	}
	for _, c := range cases {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q on one line", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}
