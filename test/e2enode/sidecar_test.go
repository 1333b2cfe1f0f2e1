package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// restricted labels a namespace to enforce the restricted Pod Security
// Standard: the API server refuses Pods that do not pass it.
var restricted = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}

// TestSidecarKeepsSlicesCurrent: in a namespace that enforces the restricted
// Pod Security Standard, `deploy --sidecar-for deploy/web` (RBAC) and its
// --patch, applied with kubectl, put the loop beside a real workload. The
// sidecar publishes the Service's Pods with the loop's token, which the
// workload's own container does not hold; when a workload's own readiness
// probe fails (the kubelet's verdict, no status patch) the slice marks it
// not ready, and ready again when the probe passes.
func TestSidecarKeepsSlicesCurrent(t *testing.T) {
	requireNode(t)
	ns := newNamespace(t, restricted)
	// The namespace enforces: the workload without security contexts is
	// refused.
	bare := "apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\nspec:\n  containers: [{name: web, image: " + workloadImage + "}]\n"
	if r := kubectl(t, bare, "create", "--dry-run=server", "-n", ns, "-f", "-"); r.Code == 0 || !strings.Contains(r.Stderr, `violates PodSecurity "restricted`) {
		t.Fatalf("a Pod failing the restricted profile was admitted: exit %d %s", r.Code, r.Stderr)
	}
	// Before the patch the workload runs as the namespace's default
	// ServiceAccount, whose token the kubelet mounts: the probe below sees
	// one where there is one.
	for _, p := range startWeb(t, ns, 2) {
		if got := tokenMounted(t, p.Status.PodIP); got != "present" {
			t.Fatalf("pod %s before the patch: token %s; the probe of the token sees nothing", p.Name, got)
		}
	}

	rbac := kubectl(t, "", "slices", "deploy", "--image", pluginImage, "--sidecar-for", "deploy/web", "-n", ns).ok(t)
	kubectl(t, rbac, "apply", "-f", "-").ok(t)
	patch := kubectl(t, "", "slices", "deploy", "--image", pluginImage, "--sidecar-for", "deploy/web", "-n", ns, "--patch").ok(t)
	kubectl(t, "", "patch", "deployment", "web", "-n", ns, "--type", "strategic", "-p", patch).ok(t)

	pods := sidecarPods(t, ns, 2)
	want := map[string]bool{}
	for _, p := range pods {
		want[p.Status.PodIP] = true
	}
	waitSlice(t, ns, "web", want)
	// The Pods run as the loop's ServiceAccount, but only the sidecar
	// mounts its token (it wrote the slices above with it: the default
	// ServiceAccount may write none): the workload's container has none.
	for _, p := range pods {
		if p.Spec.ServiceAccountName != "kubectl-slices" {
			t.Errorf("pod %s runs as %q", p.Name, p.Spec.ServiceAccountName)
		}
		if got := tokenMounted(t, p.Status.PodIP); got != "absent" {
			t.Errorf("pod %s: the workload's container finds a token (%s): it holds the loop's rights", p.Name, got)
		}
	}

	// The sidecar's own log, through the kubelet.
	eventually(t, 20*time.Second, "sidecar log", func() error {
		logs := kubectl(t, "", "logs", "-n", ns, "deploy/web", "-c", "kubectl-slices")
		if !strings.Contains(logs.Stdout, "service "+ns+"/web: created 1 slice") {
			return fmt.Errorf("exit %d: %s%s", logs.Code, logs.Stdout, logs.Stderr)
		}
		return nil
	})

	// Readiness from the workload's probe: switch its /ready off, and the
	// kubelet marks the Pod not ready; the sidecar follows.
	flipped := pods[0]
	setReady(t, flipped.Status.PodIP, false)
	want[flipped.Status.PodIP] = false
	waitSlice(t, ns, "web", want)
	if p, err := cluster.Admin.CoreV1().Pods(ns).Get(context.Background(), flipped.Name, metav1.GetOptions{}); err != nil || podReady(p) {
		t.Fatalf("pod %s: ready %v, %v: the kubelet should have marked it not ready", flipped.Name, p != nil && podReady(p), err)
	}
	setReady(t, flipped.Status.PodIP, true)
	want[flipped.Status.PodIP] = true
	waitSlice(t, ns, "web", want)
	noRestarts(t, ns, "app=web")
}

// noRestarts fails the test if a container of the Pods restarted: the
// kubelet's liveness probe or a crash would have.
func noRestarts(t *testing.T, ns, selector string) {
	t.Helper()
	list, err := cluster.Admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount != 0 {
				t.Errorf("pod %s container %s restarted %d times: %s", p.Name, c.Name, c.RestartCount, statuses(&p))
			}
		}
	}
}

// sidecarPods waits until the web Deployment has count Pods, each running
// the workload and the kubectl-slices container, all Ready.
func sidecarPods(t *testing.T, ns string, count int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, 90*time.Second, "web Pods with the sidecar", func() error {
		list, err := cluster.Admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err
		}
		pods = nil
		for _, p := range list.Items {
			if len(p.Spec.Containers) != 2 {
				return fmt.Errorf("pod %s has %d containers (rollout under way)", p.Name, len(p.Spec.Containers))
			}
			if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || !podReady(&p) {
				return fmt.Errorf("pod %s: phase %s, ready %v, %s", p.Name, p.Status.Phase, podReady(&p), statuses(&p))
			}
			pods = append(pods, p)
		}
		if len(pods) != count {
			return fmt.Errorf("%d pods", len(pods))
		}
		return nil
	})
	return pods
}

// tokenMounted asks the workload at ip whether a ServiceAccount token is
// mounted in its container: "present" or "absent".
func tokenMounted(t *testing.T, ip string) string {
	t.Helper()
	code, body, err := httpGet(fmt.Sprintf("http://%s:8000/token", ip))
	if err != nil || code != 200 {
		t.Fatalf("GET /token on %s: %d %q %v", ip, code, body, err)
	}
	return strings.TrimSpace(body)
}

// setReady switches the workload's /ready at ip.
func setReady(t *testing.T, ip string, ready bool) {
	t.Helper()
	path := "off"
	if ready {
		path = "on"
	}
	code, body, err := httpDo("POST", fmt.Sprintf("http://%s:8000/ready/%s", ip, path))
	if err != nil || code != 200 {
		t.Fatalf("POST /ready/%s on %s: %d %q %v", path, ip, code, body, err)
	}
}
