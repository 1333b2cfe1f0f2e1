package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without kube-controller-manager, explain names the likely cause and the
// repair command; after sync it reports no drift and exits 0.
func TestExplainBrokenThenRepaired(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	p := podSpec("web", 3, 40)
	p.Node = "node-gone"
	mustPods(t, shared, ns, podSpec("web", 0, 40), podSpec("web", 1, 40), p)

	r := slices(t, "explain", "svc/web", "-n", ns).mustCode(t, 1)
	for _, want := range []string{
		"kube-controller-manager has written no slices for this Service although 2 pods are ready: its EndpointSlice controller is likely down",
		"Run: kubectl slices sync svc/web -n " + ns,
		"NodeNotFound: node node-gone not found",
		"Missing  10.40.0.1",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, r.Stdout)
		}
	}
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	r = slices(t, "explain", "svc/web", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "Diagnosis: in sync: 2 of 3 matched Pods are ready endpoints") || strings.Contains(r.Stdout, "Drift") {
		t.Errorf("after sync:\n%s", r.Stdout)
	}
	r = slices(t, "explain", "svc/web", "-n", ns, "-o", "json").mustCode(t, 0)
	var report struct {
		Schema string `json:"schema"`
		InSync bool   `json:"inSync"`
		Pods   []struct {
			Name   string `json:"name"`
			Reason string `json:"reason"`
		} `json:"pods"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
	if report.Schema != "kubectl-slices.explain/v1" || !report.InSync || len(report.Pods) != 3 || report.Pods[2].Reason != "NodeNotFound" {
		t.Errorf("report %+v", report)
	}
}

// explain --local reads a directory of manifests with no kubeconfig at all.
func TestExplainLocalWithoutKubeconfig(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 41), podSpec("web", 1, 41))
	dir := t.TempDir()
	for _, kind := range []string{"services", "pods", "endpointslices"} {
		dump := kubectl(t, shared, "get", kind, "-n", ns, "-o", "yaml").mustCode(t, 0)
		if err := os.WriteFile(filepath.Join(dir, kind+".yaml"), []byte(dump.Stdout), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	nodes := kubectl(t, shared, "get", "nodes", "-o", "json").mustCode(t, 0)
	if err := os.WriteFile(filepath.Join(dir, "nodes.json"), []byte(nodes.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}

	// Run the plugin with no cluster: no KUBECONFIG, an empty HOME.
	cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), "explain", "svc/web", "--local", "-f", dir)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=/usr/bin:/bin", "KUBECONFIG=" + filepath.Join(t.TempDir(), "missing")}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("explain --local: %v, want exit 1 (no slices yet: drift)\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Service " + ns + "/web", "Selector matches 2 Pods", "10.41.0.1", "zone-a", "likely down"} {
		if !strings.Contains(text, want) {
			t.Errorf("explain --local lacks %q:\n%s", want, text)
		}
	}
}
