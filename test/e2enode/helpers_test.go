package e2enode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var nsSeq atomic.Int64

// newNamespace makes a namespace for one test, with labels (e.g. Pod
// Security), and waits for its default ServiceAccount (the controller's).
func newNamespace(t testing.TB, labels map[string]string) string {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("node-%d-%s", nsSeq.Add(1), strings.ToLower(strings.TrimPrefix(t.Name(), "Test")))
	if len(name) > 60 {
		name = name[:60]
	}
	name = strings.TrimRight(name, "-")
	if _, err := cluster.Admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "default ServiceAccount in "+name, func() error {
		_, err := cluster.Admin.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	return name
}

// eventually polls cond until it returns nil or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	dumpNodeLogs(t)
	t.Fatalf("%s: not after %s: %v", what, timeout, err)
}

// dumpNodeLogs puts the end of the kubelets' and containerds' logs in the
// test's output, for a failure's diagnosis.
func dumpNodeLogs(t testing.TB) {
	t.Helper()
	for _, f := range []string{node.KubeletLog(), node.ContainerdLog(), nodeB.KubeletLog(), nodeB.ContainerdLog()} {
		b, _ := os.ReadFile(f)
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		t.Logf("--- %s (end)\n%s", f, b)
	}
}

// runningPods waits until the Pods matching selector in ns are count,
// Running and (if ready) Ready, and returns them.
func runningPods(t testing.TB, ns, selector string, count int, ready bool) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, 90*time.Second, fmt.Sprintf("%d running pods %s in %s", count, selector, ns), func() error {
		list, err := cluster.Admin.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return err
		}
		pods = nil
		for _, p := range list.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || (ready && !podReady(&p)) {
				return fmt.Errorf("pod %s: phase %s, ready %v, statuses %s", p.Name, p.Status.Phase, podReady(&p), statuses(&p))
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

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// statuses summarises why containers are not running, for messages.
func statuses(p *corev1.Pod) string {
	var b strings.Builder
	for _, s := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		fmt.Fprintf(&b, "[%s ready=%v", s.Name, s.Ready)
		if w := s.State.Waiting; w != nil {
			fmt.Fprintf(&b, " waiting %s: %s", w.Reason, w.Message)
		}
		if term := s.LastTerminationState.Terminated; term != nil {
			fmt.Fprintf(&b, " last exit %d %s", term.ExitCode, term.Reason)
		}
		b.WriteString("] ")
	}
	return b.String()
}

// httpGet fetches a URL from the node's host network (where the kubelet
// probes from) and returns the status and body.
func httpGet(url string) (int, string, error) {
	return httpDo(http.MethodGet, url)
}

func httpDo(method, url string) (int, string, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, "", err
	}
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
