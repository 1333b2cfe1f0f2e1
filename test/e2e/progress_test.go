package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// onTerminal runs shell (a command line for sh) under a pseudo-terminal
// (util-linux script), with kubectl and the plugin on PATH, and returns
// what the terminal showed: stdout and stderr, unless the line redirects
// them.
func onTerminal(t *testing.T, cp *controlplane.ControlPlane, shell string) string {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to run under a pseudo-terminal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "script", "-qfec", shell, "/dev/null")
	cmd.Env = append(os.Environ(),
		"KUBECONFIG="+cp.Kubeconfig, "TERM=xterm", "COLUMNS=200",
		"PATH="+pluginDir+string(os.PathListSeparator)+cp.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && exitCode(err) > 1 { // check's findings exit 1
		t.Fatalf("%s: %v\n%s", shell, err, out.String())
	}
	return out.String()
}

// progressLine is a redraw of the progress line: back to the line's start,
// erase it, then the counts.
var progressLine = regexp.MustCompile(`\r\x1b\[KServices (\d+)/(\d+) \(\d+%\)`)

// progressNamespace seeds n Services of 3 ready Pods each.
func progressNamespace(t *testing.T, n int) string {
	ns := newNamespace(t, shared)
	var specs []controlplane.PodSpec
	for s := range n {
		app := fmt.Sprintf("svc-%02d", s)
		mustService(t, shared, service(ns, app, func(s *corev1.Service) { s.Labels = map[string]string{"tier": "web"} }))
		for i := range 3 {
			p := podSpec(app, i, 0)
			p.IPs = []string{fmt.Sprintf("10.44.%d.%d", s, i+1)}
			specs = append(specs, p)
		}
	}
	mustPods(t, shared, ns, specs...)
	return ns
}

// Long runs over many Services draw a progress line on a terminal (stderr)
// and leave the terminal's line clean after; piped, or on stdout, there is
// none of it.
func TestProgressOnlyOnTerminal(t *testing.T) {
	const n = 12
	ns := progressNamespace(t, n)
	assertProgress := func(t *testing.T, what, out string) {
		t.Helper()
		m := progressLine.FindAllStringSubmatch(out, -1)
		if len(m) == 0 {
			t.Fatalf("%s: no progress line on the terminal:\n%q", what, out)
		}
		if m[0][2] != fmt.Sprint(n) {
			t.Errorf("%s: progress over %s Services, want %d:\n%q", what, m[0][2], n, out)
		}
		// The line is cleared once the run is over, before its result.
		last := progressLine.FindAllStringIndex(out, -1)
		if i := last[len(last)-1][1]; !strings.Contains(out[i:], "\r\x1b[K") {
			t.Errorf("%s: progress line not cleared:\n%q", what, out)
		}
	}
	assertQuiet := func(t *testing.T, what, out string) {
		t.Helper()
		if strings.Contains(out, "\x1b[K") || strings.Contains(out, "Services 1/") {
			t.Errorf("%s: progress where no terminal is:\n%q", what, out)
		}
	}

	t.Run("sync", func(t *testing.T) {
		out := onTerminal(t, shared, "kubectl slices sync --all -n "+ns)
		assertProgress(t, "sync --all", out)
		// Drawn at once, before the cluster is read and any Service done.
		if m := progressLine.FindStringSubmatch(out); m[1] != "0" {
			t.Errorf("first progress line at %s/%s Services, want 0 done:\n%q", m[1], m[2], out)
		}
		if !strings.Contains(out, "svc-00") {
			t.Errorf("no result after the progress:\n%q", out)
		}
		r := slices(t, "sync", "--all", "-n", ns).mustCode(t, 0)
		assertQuiet(t, "sync --all piped", r.Stdout+r.Stderr)
	})
	t.Run("sync-json-stdout", func(t *testing.T) {
		// stdout to a file, stderr on the terminal: the JSON stays clean.
		file := filepath.Join(t.TempDir(), "out.json")
		out := onTerminal(t, shared, "kubectl slices sync -l tier=web -n "+ns+" -o json > "+file)
		assertProgress(t, "sync -l -o json", out)
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		assertQuiet(t, "-o json's stdout", string(raw))
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Errorf("stdout is not JSON: %v\n%q", err, raw)
		}
	})
	t.Run("check", func(t *testing.T) {
		out := onTerminal(t, shared, "kubectl slices check -n "+ns)
		assertProgress(t, "check", out)
		r := slices(t, "check", "-n", ns)
		assertQuiet(t, "check piped", r.Stdout+r.Stderr)
	})
	t.Run("watch-first-pass", func(t *testing.T) {
		watch := "timeout -s INT 6 kubectl slices sync --watch --all -n " + ns + " --summary-interval=0"
		out := onTerminal(t, shared, watch+"; true")
		m := progressLine.FindAllStringSubmatch(out, -1)
		if len(m) == 0 || m[len(m)-1][1] != fmt.Sprint(n) {
			t.Fatalf("watch: no progress line reaching %d/%d:\n%q", n, n, out)
		}
		last := out[strings.LastIndex(out, m[len(m)-1][0])+1:]
		if end := strings.IndexAny(last, "\r\n"); end >= 0 {
			last = last[:end]
		}
		if !strings.Contains(last, "slowest "+ns+"/") {
			t.Errorf("watch: the last progress line names no slowest Service: %q", last)
		}
		assertProgress(t, "watch", out)
		w := startWatch(t, shared, shared.Kubeconfig, "sync", "--watch", "--all", "-n", ns, "--summary-interval=0")
		w.waitLine(t, "caches filled", time.Minute)
		time.Sleep(time.Second) // the first pass is over
		w.stop(t, syscall.SIGINT)
		assertQuiet(t, "watch piped", w.output())
	})
}
