package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A loop kept to -l deletes the slices of a deleted Service it selected
// (its slices carry its labels) and leaves those of a deleted Service it
// did not select, which another run wrote.
func TestWatchRemovesOnlySelectedOrphans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t, shared)
	for _, name := range []string{"mine", "other"} {
		mustService(t, shared, service(ns, name, func(s *corev1.Service) { s.Labels = map[string]string{"tier": name} }))
		mustPods(t, shared, ns, podSpec(name, 0, 61))
	}
	kubectl(t, shared, "slices", "sync", "--all", "-n", ns).mustCode(t, 0)
	for _, name := range []string{"mine", "other"} {
		if n := len(listSlices(t, shared, ns, name, oursLabel)); n != 1 {
			t.Fatalf("%s: %d slices of ours after the sync, want 1", name, n)
		}
		if err := shared.Admin.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := startWatch(t, shared, shared.Kubeconfig, "sync", "--watch", "-n", ns, "-l", "tier=mine", "--summary-interval=0")
	within(t, "the selected orphan deleted", 20*time.Second, func() bool { return len(listSlices(t, shared, ns, "mine", oursLabel)) == 0 })
	// Stopped gracefully, the loop finishes its syncs in flight and says
	// how many Services were still queued: none, so "other" was synced too.
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 && code != 143 {
		t.Fatalf("watch exited %d", code)
	}
	if out := w.output(); !strings.Contains(out, "0 Services queued") || strings.Contains(out, ns+"/other") {
		t.Errorf("want a summary with none queued and no word of %s/other:\n%s", ns, out)
	}
	if n := len(listSlices(t, shared, ns, "other", oursLabel)); n != 1 {
		t.Errorf("the orphan of a Service -l did not select: %d slices left, want 1", n)
	}
}
