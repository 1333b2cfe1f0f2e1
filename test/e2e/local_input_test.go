package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// explain --local refuses, with exit 2 and the field named, what the API
// server would refuse; a conflicting duplicate, a URL and an input past the
// size limit are refused too.
func TestExplainLocalRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	svc := func(ports string) string {
		return "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\nspec:\n  selector: {app: web}\n  ports: " + ports + "\n"
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, namespace: default, labels: {app: web}}\nstatus: {phase: Running, podIP: 999.1.1.1}\n"
	good := file("good.yaml", svc("[{port: 80}]"))
	for _, c := range []struct {
		name  string
		files []string
		want  string
	}{
		{"port 70000", []string{file("p.yaml", svc("[{port: 70000}]"))}, "service default/web: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535"},
		{"protocol ICMP", []string{file("icmp.yaml", svc("[{port: 80, protocol: ICMP}]"))}, `spec.ports[0].protocol: Unsupported value: "ICMP"`},
		{"podIP", []string{good, file("pod.yaml", pod)}, `pod default/web-1: status.podIP: Invalid value: "999.1.1.1"`},
		{"conflicting duplicate", []string{good, file("other.yaml", svc("[{port: 81}]"))}, "service default/web is given twice and the two differ"},
		{"URL", []string{"http://127.0.0.1:1/svc.yaml"}, "not URLs"},
		{"/dev/zero", []string{"/dev/zero"}, "input larger than 64Mi"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"explain", "svc/web", "--local"}
			for _, f := range c.files {
				args = append(args, "-f", f)
			}
			r := slices(t, args...).mustCode(t, 2)
			if !strings.Contains(r.Stderr, c.want) || strings.Count(r.Stderr, "\n") != 1 {
				t.Fatalf("stderr %q, want one line containing %q", r.Stderr, c.want)
			}
		})
	}
	// The same file twice counts once.
	r := slices(t, "explain", "svc/web", "--local", "-f", good, "-f", good)
	if r.Code == 2 || r.Code == 3 {
		t.Fatalf("identical duplicates refused: exit %d %s", r.Code, r.Stderr)
	}
}

// Ctrl-C while explain --local waits on a FIFO with no writer exits 130 at
// once.
func TestExplainLocalFIFOInterrupt(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(shared.Kubectl(), "slices", "explain", "svc/web", "--local", "-f", fifo)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+shared.Kubeconfig,
		"PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	time.Sleep(2 * time.Second) // kubectl has exec'd the plugin, which waits in open(2)
	sent := time.Now()
	_ = cmd.Process.Signal(os.Interrupt)
	var err error
	select {
	case err = <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("still reading 10 s after SIGINT")
	}
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || took > 2*time.Second {
		t.Fatalf("exit %v after %v, want 130 at once; stderr %q", err, took, errOut.String())
	}
	t.Logf("SIGINT on a FIFO: exit 130 after %v", took.Round(time.Millisecond))
}

// A `kubectl cluster-info dump` directory (typed lists whose items carry no
// kind) is read as the cluster it was dumped from.
func TestExplainLocalClusterInfoDump(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 45), podSpec("web", 1, 45))
	dir := t.TempDir()
	r := kubectl(t, shared, "cluster-info", "dump", "--namespaces", ns, "--output-directory", dir)
	if r.Code != 0 {
		t.Skipf("cluster-info dump: exit %d %s", r.Code, r.Stderr)
	}
	local := slices(t, "explain", "svc/web", "-n", ns, "--local", "-f", dir, "-o", "json")
	live := slices(t, "explain", "svc/web", "-n", ns, "-o", "json")
	if local.Code != live.Code || !strings.Contains(local.Stdout, `"matched": 2`) {
		t.Fatalf("local exit %d, live exit %d\nlocal:\n%s\n%s", local.Code, live.Code, local.Stdout, local.Stderr)
	}
}
