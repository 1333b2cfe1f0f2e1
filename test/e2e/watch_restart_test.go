package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kube-apiserver is killed and restarted (same port, same etcd) while
// --watch runs: the process stays up, says once that it lost each watch,
// and converges afterwards, including a change made while the server it
// watches was down (through a second API server on the same etcd).
func TestWatchSurvivesAPIServerRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	ns := "restart"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	mustService(t, cp, service(ns, "web"))
	mustPods(t, cp, ns, podSpec("web", 0, 45), podSpec("web", 1, 45), podSpec("web", 2, 45))
	w := startWatch(t, cp, cp.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--summary-interval=0")
	want := "10.45.0.1:true: 10.45.0.2:true: 10.45.0.3:true:"
	within(t, "first sync", 10*time.Second, func() bool { return endpointStateNoZone(t, cp, ns, "web") == want })

	cp.StopAPIServer()
	// While it is down, web-1 turns not ready and web-2 is deleted, through
	// another API server on the same etcd.
	side, stopSide, err := cp.SideAPIServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := side.CoreV1().Pods(ns).Get(ctx, "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == "Ready" {
			p.Status.Conditions[i].Status = "False"
			p.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	if _, err := side.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := side.CoreV1().Pods(ns).Delete(ctx, "web-2", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	stopSide()
	time.Sleep(2 * time.Second) // down long enough for the watches to notice
	select {
	case <-w.done:
		t.Fatalf("watch exited while the API server was down: %v", w.err)
	default:
	}
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	want = "10.45.0.1:true: 10.45.0.2:false:"
	within(t, "converged after the restart", 60*time.Second, func() bool { return endpointStateNoZone(t, cp, ns, "web") == want })
	w.waitLine(t, "pod web-1 not ready", 5*time.Second)

	code, took := w.stop(t, syscall.SIGTERM)
	out := w.output()
	t.Logf("exit %d %v after SIGTERM; output:\n%s", code, took, out)
	if code != 0 || took > 5*time.Second {
		t.Fatalf("exit %d after %v", code, took)
	}
	for _, line := range []string{"lost the connection to the API server", "reconnected to the API server"} {
		if n := strings.Count(out, line); n != 1 {
			t.Errorf("%q said %d times, want once", line, n)
		}
	}
}
