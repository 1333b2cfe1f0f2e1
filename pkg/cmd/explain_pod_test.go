package cmd

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// The Pod and address forms refuse what they cannot answer, before any
// read, with a usage error naming the fix.
func TestExplainPodAndIPUsage(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "--ip", "10.0.0.300"}, "--ip must be an IPv4 or IPv6 address"},
		{[]string{"explain", "pod/web-0", "--ip", "10.0.0.1"}, "--ip takes no Service, Pod or -l"},
		{[]string{"explain", "pod/web-0", "-A"}, "-A goes with --ip"},
		{[]string{"explain", "pod/web-0", "-l", "app=web"}, "name Pods or select them with -l, not both"},
		{[]string{"explain", "pod/web-0", "svc/web"}, "is not a Pod"},
		{[]string{"explain", "pod"}, "name the Pod"},
		{[]string{"explain", "pod/Web_0"}, "is not a Pod name"},
		{[]string{"explain", "svc/web", "-l", "app=web"}, "-l and -A go with pod/NAME and --ip"},
		{[]string{"explain", "pod", "-l", "app in ("}, "is not a label selector"},
		{[]string{"explain", "pod/web-0", "--show-pods", "all"}, "--show-pods goes with svc/NAME"},
	} {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}

// Offline, explain pod and --ip answer from the manifests; colour moves
// no column; a Pod or address not there exits 3.
func TestExplainPodAndIPLocal(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	files := []string{"--local", "-f", "testdata/explain/exclusions.yaml", "-f", "testdata/explain/nodes.yaml", "-n", "shop"}
	for _, args := range [][]string{{"explain", "pod/ok-1"}, {"explain", "--ip", "10.0.0.1"}, {"explain", "pod", "-l", "app=web"}} {
		plain, errOut, code := runCmd(t, append(append(args, files...), "--color", "never")...)
		if code > 1 || plain == "" {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		colored, _, _ := runCmd(t, append(append(args, files...), "--color", "always")...)
		if stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored, ""); stripped != plain || !strings.Contains(colored, "\x1b[") {
			t.Errorf("%v: coloured output misaligned or uncoloured:\n%s\n---\n%s", args, plain, stripped)
		}
	}
	for _, args := range [][]string{{"explain", "pod/nope"}, {"explain", "--ip", "10.9.9.9"}} {
		if _, errOut, code := runCmd(t, append(args, files...)...); code != exit.NotFound {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, exit.NotFound, errOut)
		}
	}
}
