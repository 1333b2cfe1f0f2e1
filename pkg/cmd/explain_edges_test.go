package cmd

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

func explainArgs(scenario string, extra ...string) []string {
	return append([]string{"explain", "svc/web", "-n", "shop", "--local",
		"-f", "testdata/explain/" + scenario + ".yaml", "-f", "testdata/explain/nodes.yaml"}, extra...)
}

// Colour must not move a single column: the coloured output, with its escape
// sequences removed, is the plain output byte for byte.
func TestExplainColorKeepsAlignment(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	for _, scenario := range []string{"exclusions", "headless", "controller-stale"} {
		plain, _, _ := runCmd(t, explainArgs(scenario, "--color", "never")...)
		colored, _, _ := runCmd(t, explainArgs(scenario, "--color", "always")...)
		if !strings.Contains(colored, "\x1b[") {
			t.Fatalf("%s: --color=always wrote no colour", scenario)
		}
		stripped := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colored, "")
		if stripped != plain {
			t.Errorf("%s: coloured output misaligned:\n--- plain\n%s\n--- coloured, escapes removed\n%s", scenario, plain, stripped)
		}
	}
}

// explain names its Service as sync does, and says what it wants when it
// gets none.
func TestExplainArgForms(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	want, _, code := runCmd(t, explainArgs("healthy")...)
	args := explainArgs("healthy")
	args = append([]string{"explain", "svc", "web"}, args[2:]...)
	got, errOut, gotCode := runCmd(t, args...)
	if got != want || gotCode != code {
		t.Errorf("explain svc web: exit %d, stderr %q, output differs from explain svc/web:\n%s", gotCode, errOut, got)
	}
}

// Planner warnings go to stderr (and to the warnings field of -o json),
// never between the sections of the report on stdout.
func TestExplainWarningsOnStderr(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	out, errOut, _ := runCmd(t, explainArgs("exclusions", "--color", "never")...)
	want := "Warning: service shop/web: pod/lost-1: skipping Pod lost-1"
	if strings.Contains(out, "Warning") || !strings.Contains(errOut, want) {
		t.Errorf("stdout %q\nstderr %q; want the warning on stderr only", out, errOut)
	}
	out, errOut, _ = runCmd(t, explainArgs("exclusions", "-o", "json")...)
	if !strings.Contains(out, `"warnings": [`+"\n"+`    "pod/lost-1: skipping Pod lost-1`) || !strings.Contains(errOut, want) {
		t.Errorf("-o json: stdout %q\nstderr %q", out, errOut)
	}
}

// --show-pods=excluded with nothing excluded says so in one line, no header.
func TestExplainShowExcludedNone(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	out, _, _ := runCmd(t, explainArgs("healthy", "--show-pods", "excluded")...)
	if !strings.Contains(out, "\n  No Pod is excluded: 2 matched Pods are endpoints.\n") || strings.Contains(out, "POD") {
		t.Errorf("output:\n%s", out)
	}
}

// Hand-written manifests without a namespace land in -n's, else the
// kubeconfig's, else "default".
func TestExplainLocalNamespace(t *testing.T) {
	files := []string{"--local", "-f", "testdata/explain/handwritten.yaml", "-f", "testdata/explain/nodes.yaml"}
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	out, errOut, code := runCmd(t, append([]string{"explain", "svc/web", "--color", "never"}, files...)...)
	if code != exit.Changes || !strings.HasPrefix(out, "Service default/web ") || !strings.Contains(out, "sync svc/web -n default") {
		t.Errorf("no kubeconfig: exit %d, stderr %q\n%s", code, errOut, out)
	}
	t.Setenv("KUBECONFIG", writeKubeconfig(t, "https://127.0.0.1:1", "team"))
	out, _, _ = runCmd(t, append([]string{"explain", "svc/web", "--color", "never"}, files...)...)
	if !strings.HasPrefix(out, "Service team/web ") {
		t.Errorf("kubeconfig namespace team:\n%s", out)
	}
	out, _, _ = runCmd(t, append([]string{"explain", "svc/web", "-n", "other", "--color", "never"}, files...)...)
	if !strings.HasPrefix(out, "Service other/web ") {
		t.Errorf("-n other:\n%s", out)
	}
}
