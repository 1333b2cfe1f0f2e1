package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

var (
	shared    *controlplane.ControlPlane
	pluginDir string
	nsSeq     atomic.Int64
)

// TestMain builds the plugin, starts the shared control plane and stops it
// whatever happens to the tests.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBECTL_SLICES_BIN_DIR") == "" {
		fmt.Fprintln(os.Stderr, "e2e: KUBECTL_SLICES_BIN_DIR is not set; run `make e2e` (it builds the control plane)")
		return 1
	}
	dir, err := os.MkdirTemp("", "kubectl-slices-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pluginDir = dir
	if err := buildPlugin(dir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build plugin:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	shared, err = controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start control plane:", err)
		return 1
	}
	defer shared.Stop()
	if err := createNodes(ctx, shared); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: nodes:", err)
		return 1
	}
	return m.Run()
}

// repoRoot is two levels above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func buildPlugin(dir string) error {
	tags, err := controlplane.BuildTags(repoRoot())
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-tags", tags, "-o", filepath.Join(dir, "kubectl-slices"),
		"-ldflags", "-X github.com/kubectl-slices/kubectl-slices/pkg/cmd.Version=v0.0.0-e2e", "./cmd/kubectl-slices")
	cmd.Dir = repoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	// The completion helper kubectl runs for plugins, as installed.
	script, err := os.ReadFile(filepath.Join(repoRoot(), "completions", "kubectl_complete-slices"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kubectl_complete-slices"), script, 0o755)
}

// result is what one command printed and how it exited.
type result struct {
	Stdout, Stderr string
	Code           int
}

// kubectl runs the harness's kubectl with the plugin on PATH, against cp.
func kubectl(t testing.TB, cp *controlplane.ControlPlane, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cp.Kubectl(), args...)
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+cp.Kubeconfig,
		"PATH="+pluginDir+string(os.PathListSeparator)+cp.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := result{Stdout: out.String(), Stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// slices runs `kubectl slices ARGS...` on the shared cluster.
func slices(t testing.TB, args ...string) result {
	t.Helper()
	return kubectl(t, shared, append([]string{"slices"}, args...)...)
}

// mustCode fails the test unless the command exited with code.
func (r result) mustCode(t testing.TB, code int) result {
	t.Helper()
	if r.Code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.Code, code, r.Stdout, r.Stderr)
	}
	return r
}

// newNamespace makes a fresh namespace on cp for one test.
func newNamespace(t testing.TB, cp *controlplane.ControlPlane) string {
	t.Helper()
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, t.Name())
	ns := fmt.Sprintf("e2e-%d-%s", nsSeq.Add(1), name)
	if len(ns) > 60 {
		ns = ns[:60]
	}
	ns = strings.TrimRight(ns, "-")
	if err := cp.Namespace(context.Background(), ns); err != nil {
		t.Fatalf("namespace %s: %v", ns, err)
	}
	return ns
}
