package cmd

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCmd runs the root command with test streams, as main does.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewRootCommand(streams)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil && err.Error() != "" {
		errOut.WriteString("error: " + err.Error() + "\n")
	}
	return out.String(), errOut.String(), exit.Code(err)
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./pkg/cmd -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the output (go test ./pkg/cmd -update rewrites it):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestExplainGolden runs `explain --local` on manifest scenarios and
// compares the human and JSON output with golden files; no cluster and no
// kubeconfig are involved.
func TestExplainGolden(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	cases := []struct {
		name string
		code int
	}{
		{"healthy", 0},
		{"no-match", 0},
		{"exclusions", 1},
		{"terminating", 1},
		{"terminating-publish-not-ready", 1},
		{"controller-stale", 1},
		{"both-managers", 0},
		{"handwritten", 1},
		{"headless", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := []string{"-f", "testdata/explain/" + c.name + ".yaml", "-f", "testdata/explain/nodes.yaml"}
			for _, format := range []string{"txt", "json"} {
				args := append([]string{"explain", "svc/web", "-n", "shop", "--local", "--color", "never"}, files...)
				if format == "json" {
					args = append(args, "-o", "json")
				}
				out, errOut, code := runCmd(t, args...)
				if code != c.code {
					t.Fatalf("-o %s: exit %d, want %d; stderr %s", format, code, c.code, errOut)
				}
				golden(t, "testdata/explain/"+c.name+"."+format, out)
			}
		})
	}
}
