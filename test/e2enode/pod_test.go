package e2enode

import (
	"fmt"
	"strings"
	"testing"
)

// TestNodeRunsPod: a plain Pod of the workload image is scheduled on the
// node, gets an address on the bridge, passes its readiness probe, and
// answers there.
func TestNodeRunsPod(t *testing.T) {
	requireNode(t)
	ns := newNamespace(t, nil)
	kubectl(t, workloadPod("plain", map[string]string{"app": "plain"}), "apply", "-n", ns, "-f", "-").ok(t)
	pods := runningPods(t, ns, "app=plain", 1, true)
	code, body, err := httpGet(fmt.Sprintf("http://%s:8000/", pods[0].Status.PodIP))
	if err != nil || code != 200 || !strings.Contains(body, "workload") {
		t.Fatalf("GET / on the Pod: %d %q %v", code, body, err)
	}
	if !strings.HasPrefix(pods[0].Status.PodIP, "10.244.0.") {
		t.Fatalf("Pod IP %s is not on the bridge's %s", pods[0].Status.PodIP, podCIDR)
	}
}

// workloadPod is a Pod manifest of the workload, readiness from /ready,
// passing the restricted Pod Security profile.
func workloadPod(name string, labels map[string]string) string {
	var l strings.Builder
	for k, v := range labels {
		fmt.Fprintf(&l, "    %s: %s\n", k, v)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  labels:
%sspec:
%s`, name, l.String(), indent(workloadPodSpec(), "  "))
}

// workloadPodIn is workloadPod on a node of the zone (a nodeSelector).
func workloadPodIn(name string, labels map[string]string, zone string) string {
	return workloadPod(name, labels) + fmt.Sprintf("  nodeSelector: {%s: %s}\n", zoneKey, zone)
}

// workloadPodSpec is the workload's Pod spec: one container serving on
// 8080, ready while /ready says so, restricted-compliant.
func workloadPodSpec() string {
	return `securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  seccompProfile: {type: RuntimeDefault}
terminationGracePeriodSeconds: 2
containers:
- name: web
  image: ` + workloadImage + `
  imagePullPolicy: Never
  ports: [{name: http, containerPort: 8000}]
  readinessProbe:
    httpGet: {path: /ready, port: http}
    periodSeconds: 1
    failureThreshold: 1
  securityContext:
    allowPrivilegeEscalation: false
    capabilities: {drop: [ALL]}
    readOnlyRootFilesystem: true
`
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
