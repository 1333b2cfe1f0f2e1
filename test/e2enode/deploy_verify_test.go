package e2enode

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const verifierSelector = "app.kubernetes.io/name=kubectl-slices,app.kubernetes.io/component=verifier"

// TestDeployVerify: `kubectl slices deploy --verify` runs the verifier as
// a Pod of its own on the real nodes, as its own ServiceAccount with the
// rights its tiers grant. With the default tier (healthz) the tiers it
// was not granted are UNKNOWN on every node and DNS replica, class
// forbidden, naming the right (never a crash loop); applied again with
// the metrics tier, the replicas are OK and the nodes' rules still
// forbidden; with every tier, the same Pod verifies both nodes and both
// replicas OK at its next round (the rights are reviewed each round).
func TestDeployVerify(t *testing.T) {
	requireNode(t)
	requireCoreDNS(t)
	replicas := coreDNSPods(t)
	applyDeploy(t, "--verify")
	pod := runningPods(t, "kubectl-slices", verifierSelector, 1, true)[0]
	if pod.Spec.ServiceAccountName != "kubectl-slices-verify" {
		t.Fatalf("the verifier runs as %q", pod.Spec.ServiceAccountName)
	}
	a, b := node.Name(), nodeB.Name()
	dnsA, dnsB := "kube-system/"+replicas[a].Name, "kube-system/"+replicas[b].Name
	metrics := func() (string, error) {
		code, body, err := httpGet(fmt.Sprintf("http://%s:8080/metrics", pod.Status.PodIP))
		if err != nil || code != 200 {
			return "", fmt.Errorf("GET /metrics: %d %v", code, err)
		}
		return body, nil
	}
	holds := func(want ...string) func() error {
		return func() error {
			body, err := metrics()
			if err != nil {
				return err
			}
			for _, w := range want {
				if !strings.Contains(body, w) {
					return fmt.Errorf("no %s in /metrics", w)
				}
			}
			return nil
		}
	}
	status := func(target, s string) string {
		kind := "node"
		if strings.Contains(target, "/") {
			kind = "dns"
		}
		return fmt.Sprintf(`kubectl_slices_dataplane_status{kind=%q,status=%q,target=%q} 1`, kind, s, target)
	}
	eventually(t, 60*time.Second, "the healthz tier only: every node and replica UNKNOWN, forbidden", holds(
		status(a, "UNKNOWN"), status(b, "UNKNOWN"), status(dnsA, "UNKNOWN"), status(dnsB, "UNKNOWN"),
		fmt.Sprintf(`kubectl_slices_dataplane_unknown_info{class="forbidden",kind="node",target=%q} 1`, a)))
	eventually(t, 20*time.Second, "the verifier's log naming the missing right", func() error {
		logs := kubectl(t, "", "logs", "-n", "kubectl-slices", pod.Name)
		if !strings.Contains(logs.Stdout, "node "+a+": UNKNOWN: forbidden: needs create pods/exec in kube-system") {
			return fmt.Errorf("logs:\n%s%s", logs.Stdout, logs.Stderr)
		}
		return nil
	})

	// Each further tier: the same Pod, its next round (a change of a
	// Service's slices brings it a sync period later). With metrics, the
	// replicas are read (a port-forward) and the nodes' rules still not.
	ns := newNamespace(t, nil)
	web := startWeb(t, ns, 1)
	waitSlice(t, ns, "web", map[string]bool{web[0].Status.PodIP: true})
	for i, step := range []struct {
		tiers string
		want  []string
	}{
		{"healthz,metrics", []string{status(a, "UNKNOWN"), status(b, "UNKNOWN"), status(dnsA, "OK"), status(dnsB, "OK")}},
		{"healthz,metrics,rules", []string{status(a, "OK"), status(b, "OK"), status(dnsA, "OK"), status(dnsB, "OK")}},
	} {
		manifests := kubectl(t, "", "slices", "deploy", "--image", pluginImage, "--verify", "--verify-tiers", step.tiers).ok(t)
		kubectl(t, manifests, "apply", "-f", "-").ok(t)
		kubectl(t, "", "scale", "deployment", "web", "-n", ns, fmt.Sprintf("--replicas=%d", 2+i)).ok(t)
		eventually(t, 90*time.Second, "tiers "+step.tiers, holds(step.want...))
	}
	noRestarts(t, "kubectl-slices", verifierSelector)
	// It writes nothing but Events: the API server refuses it a slice.
	sa := "system:serviceaccount:kubectl-slices:kubectl-slices-verify"
	if r := kubectl(t, "", "auth", "can-i", "create", "endpointslices.discovery.k8s.io", "--as", sa, "-n", ns); strings.TrimSpace(r.Stdout) != "no" {
		t.Errorf("the verifier may create EndpointSlices: %q", r.Stdout)
	}
}
