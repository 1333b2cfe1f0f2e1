package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// build compiles the plugin (with the build tags make build uses) and this
// command into one directory, once per test binary.
func build(t *testing.T) string {
	t.Helper()
	if os.Getenv("KUBECTL_SLICES_BIN_DIR") == "" {
		t.Skip("KUBECTL_SLICES_BIN_DIR not set (make test sets it)")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "kubectl-slices-demo-")
		if buildErr != nil {
			return
		}
		root := filepath.Join("..", "..", "..")
		tags, err := controlplane.BuildTags(root)
		if err != nil {
			buildErr = err
			return
		}
		for _, b := range []struct{ dir, out, pkg string }{{root, "kubectl-slices", "./cmd/kubectl-slices"}, {".", "localcluster", "."}} {
			c := exec.Command("go", "build", "-tags", tags, "-o", filepath.Join(binDir, b.out), b.pkg)
			c.Dir = b.dir
			if out, err := c.CombinedOutput(); err != nil {
				buildErr = errors.New(err.Error() + "\n" + string(out))
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

// TestMain removes the built binaries.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// TestStandbyAct runs make demo ACT=standby's act non-interactively: it
// fails when a step (the controller publishing, the loop writing nothing,
// the takeover, the hand-back) does not happen within its bound, and when a
// process it started outlives it.
func TestStandbyAct(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	if err := run(ctx, options{demo: true, act: "standby", pluginDir: bin, exit: true, dir: dir}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the standby act, control plane included, took %s", time.Since(start).Round(100*time.Millisecond))
	noProcessesOf(t, bin, dir)
}

// TestRepairAct runs the default act (make demo) to its end.
func TestRepairAct(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, options{demo: true, act: "repair", pluginDir: bin, exit: true, dir: dir}); err != nil {
		t.Fatal(err)
	}
	noProcessesOf(t, bin, dir)
}

// TestStandbyActInterrupted sends the command SIGINT, as Ctrl-C does, once
// the loop runs beside the controller: it exits 130 at once and leaves no
// process behind.
func TestStandbyActInterrupted(t *testing.T) {
	bin := build(t)
	dir := t.TempDir()
	c := exec.Command(filepath.Join(bin, "localcluster"), "-demo", "-act", "standby", "-plugin-dir", bin, "-cp-dir", dir)
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Process.Kill()
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "caches filled") {
				close(seen)
				break
			}
		}
		for sc.Scan() { // drain, so the command never blocks on its output
		}
	}()
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		t.Fatal("the loop did not start within 2m")
	}
	_ = c.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("after SIGINT: %v, want exit code 130", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("still running 30s after SIGINT")
	}
	noProcessesOf(t, bin, dir)
}

// noProcessesOf fails when a running process's command line names the
// plugin directory (the loop) or the control plane's directory (etcd,
// kube-apiserver, kube-controller-manager).
func noProcessesOf(t *testing.T, dirs ...string) {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		for _, d := range dirs {
			if strings.Contains(cmdline, d) {
				t.Errorf("still running: %s", cmdline)
			}
		}
	}
}
