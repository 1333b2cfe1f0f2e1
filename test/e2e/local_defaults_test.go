package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// localPod is one Pod of the hand-written manifest: its container ports
// carry no protocol, and the manifest no namespace.
type localPod struct {
	name, node, ip string
	ready          bool
	ports          string // the container's ports, as YAML flow
	podIPOnly      bool   // status written as an older kubelet does: podIP, no podIPs
}

// explain --local -f on manifests as a person or Helm writes them (no
// namespace, clusterIP, ipFamilies, protocol, targetPort or podIPs) decides exactly
// what explain decides on the same objects once the API server stored them
// with its defaults.
func TestExplainLocalMatchesAPIServerDefaults(t *testing.T) {
	ns := newNamespace(t, shared)
	pods := []localPod{
		{"web-0", "node-a1", "10.60.0.1", true, "[{containerPort: 8080}, {name: metrics, containerPort: 9090}]", false},
		{"web-1", "node-b1", "10.60.0.2", true, "[{containerPort: 8080}]", true}, // no metrics port
		{"web-2", "node-a2", "10.60.0.3", false, "[{containerPort: 8080}, {name: metrics, containerPort: 9090}]", false},
	}
	var b strings.Builder
	b.WriteString(`apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 8080}
  - {name: metrics, port: 9090, targetPort: metrics}
`)
	for _, p := range pods {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Pod
metadata: {name: %s, labels: {app: web}}
spec:
  nodeName: %s
  containers: [{name: app, image: pause, ports: %s}]
status:
  phase: Running
  podIP: %s
%s  conditions: [{type: Ready, status: "%s"}]
`, p.name, p.node, p.ports, p.ip, podIPs(p), map[bool]string{true: "True", false: "False"}[p.ready])
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "app.yaml")
	if err := os.WriteFile(manifest, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	nodes := kubectl(t, shared, "get", "nodes", "-o", "yaml").mustCode(t, 0)
	if err := os.WriteFile(filepath.Join(dir, "nodes.yaml"), []byte(nodes.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}

	local := slices(t, "explain", "svc/web", "-n", ns, "--local", "-f", dir, "-o", "json").mustCode(t, 1)

	createThroughAPIServer(t, ns, manifest, pods)
	live := slices(t, "explain", "svc/web", "-n", ns, "-o", "json").mustCode(t, 1)

	type report struct {
		Service   map[string]any   `json:"service"`
		Selector  map[string]any   `json:"selector"`
		Pods      []map[string]any `json:"pods"`
		Drift     []map[string]any `json:"drift"`
		Defaulted []string         `json:"defaulted"`
		Diagnosis map[string]any   `json:"diagnosis"`
	}
	var l, c report
	for _, x := range []struct {
		out string
		r   *report
	}{{local.Stdout, &l}, {live.Stdout, &c}} {
		if err := json.Unmarshal([]byte(x.out), x.r); err != nil {
			t.Fatalf("%v\n%s", err, x.out)
		}
	}
	if len(l.Defaulted) == 0 || len(c.Defaulted) != 0 {
		t.Errorf("defaulted: local %q, cluster %q; want the local run to say what it defaulted", l.Defaulted, c.Defaulted)
	}
	for _, f := range []struct {
		name        string
		local, live any
	}{
		{"service", l.Service, c.Service}, {"selector", l.Selector, c.Selector}, {"pods", l.Pods, c.Pods},
		{"drift", l.Drift, c.Drift}, {"diagnosis", l.Diagnosis, c.Diagnosis},
	} {
		if !reflect.DeepEqual(f.local, f.live) {
			lj, _ := json.MarshalIndent(f.local, "", "  ")
			cj, _ := json.MarshalIndent(f.live, "", "  ")
			t.Errorf("%s differs:\n--- explain --local\n%s\n--- explain on the cluster\n%s", f.name, lj, cj)
		}
	}
	// The decisions the comparison is about: all three Pods are endpoints
	// on port http (targetPort defaulted to 8080, protocol TCP); web-1 has no
	// metrics port; the Service is single-stack IPv4, not headless.
	if len(c.Pods) != 3 || c.Service["headless"] != false || fmt.Sprint(c.Service["addressTypes"]) != "[IPv4]" ||
		fmt.Sprint(c.Pods[1]["missingPorts"]) != "[metrics]" || !strings.Contains(fmt.Sprint(c.Pods[0]["endpoints"]), "http:8080/TCP metrics:9090/TCP") {
		t.Errorf("cluster report: service %v\npods %v", c.Service, c.Pods)
	}
	t.Logf("local defaulted: %q", l.Defaulted)
}

// createThroughAPIServer creates the manifest's objects through the API
// server and gives each Pod the status a kubelet would report.
func createThroughAPIServer(t *testing.T, ns, manifest string, pods []localPod) {
	// Now the same objects through the API server: kubectl apply, then
	// the status a kubelet would report.
	kubectl(t, shared, "apply", "-n", ns, "-f", manifest).mustCode(t, 0)
	ctx := context.Background()
	for _, p := range pods {
		pod, err := shared.Admin.CoreV1().Pods(ns).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ready := corev1.ConditionFalse
		if p.ready {
			ready = corev1.ConditionTrue
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: p.ip, PodIPs: []corev1.PodIP{{IP: p.ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}
		if p.podIPOnly {
			pod.Status.PodIPs = nil // the API server fills them in
		}
		if _, err := shared.Admin.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// podIPs is the manifest's podIPs line, or none for a Pod written with podIP
// only.
func podIPs(p localPod) string {
	if p.podIPOnly {
		return ""
	}
	return fmt.Sprintf("  podIPs: [{ip: %s}]\n", p.ip)
}
