package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// Offline there is no server to ask: --server-version names the release,
// and without it nothing is said about one.
func TestExplainServerVersionFlag(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	section := "Cluster release v1.32: kube-controller-manager differs here:\n  ZonelessHint (until v1.33): ready endpoints without a zone"
	for _, c := range []struct {
		flag  []string
		notes bool
	}{{nil, false}, {[]string{"--server-version", "v1.32.13"}, true}, {[]string{"--server-version", "v1.33.0"}, false}} {
		out, errOut, code := runCmd(t, explainArgs("zoneless", append([]string{"--color", "never"}, c.flag...)...)...)
		if code != 1 || strings.Contains(out, section) != c.notes || strings.Contains(out, "Cluster release") != c.notes {
			t.Errorf("%v: exit %d (want 1: no slices yet), notes %v wanted; stderr %q\n%s", c.flag, code, c.notes, errOut, out)
		}
	}
	_, errOut, code := runCmd(t, explainArgs("zoneless", "--server-version", "1.32")...)
	if code != 2 || !strings.Contains(errOut, "--server-version must be a Kubernetes release such as v1.32.13") {
		t.Errorf("--server-version 1.32: exit %d, stderr %q", code, errOut)
	}
}
