package e2e

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// --watch mirrors as kube-controller-manager's mirroring controller does,
// live: with both running on the same cluster, for random selector-less
// Services, our slices and the controller's carry the same endpoints,
// ports, labels, annotations and owner after each Endpoints object is
// created, changed (addresses turning not ready, going, a label added) and
// deleted.
func TestWatchMirrorsLikeController(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllers(ctx, "endpointslice-mirroring-controller"); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cp)
	minor := serverMinor(t, cp)
	w := startWatch(t, cp, cp.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--summary-interval=0")
	w.waitLine(t, "caches filled", 30*time.Second)
	eps := cp.Admin.CoreV1().Endpoints(ns)
	const n = 8
	for i := 0; i < n; i++ {
		r := rand.New(rand.NewSource(int64(300 + i)))
		svc, ep := randomMirrorObjects(r, ns, i)
		canonicalForOldMirroring(t, minor, ep)
		skip := ep.Labels[discovery.LabelSkipMirror] == "true"
		mustService(t, cp, svc)
		live, err := eps.Create(ctx, ep, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create endpoints: %v", err)
		}
		bothMirror(t, cp, ns, svc.Name, skip, "created")

		// Address churn: in each subset the last ready address turns not
		// ready and the first not-ready one goes; a label is added. (Redrawn
		// port sets across both families trip the controller itself: its
		// recycleSlices can leave a slice both recycled and to create, and
		// it retries "already exists" for ever.)
		for j := range live.Subsets {
			sub := &live.Subsets[j]
			nr := sub.NotReadyAddresses
			if len(nr) > 0 {
				nr = nr[1:]
			}
			if n := len(sub.Addresses); n > 1 {
				nr = append(nr, sub.Addresses[n-1])
				sub.Addresses = sub.Addresses[:n-1]
			}
			sub.NotReadyAddresses = nr
		}
		live.Labels["tier"] = "web"
		if _, err := eps.Update(ctx, live, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update endpoints: %v", err)
		}
		bothMirror(t, cp, ns, svc.Name, skip, "updated")

		if err := eps.Delete(ctx, svc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		bothMirror(t, cp, ns, svc.Name, true, "deleted")
	}

	// A Service that loses its selector mirrors the Endpoints object the
	// Endpoints controller left (our cache holds such objects emptied, and
	// reads the whole one when it is mirrored).
	svc, ep := randomMirrorObjects(rand.New(rand.NewSource(999)), ns, 99)
	canonicalForOldMirroring(t, minor, ep)
	svc.Spec.Selector = map[string]string{"app": "nothing"}
	ep.Labels["endpoints.kubernetes.io/managed-by"] = "endpoint-controller"
	mustService(t, cp, svc)
	if _, err := eps.Create(ctx, ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// With a selector it is planned from its (no) Pods: a placeholder
	// slice of ours, none mirrored.
	time.Sleep(2 * time.Second)
	editService(t, cp, ns, svc.Name, func(s *corev1.Service) { s.Spec.Selector = nil })
	bothMirror(t, cp, ns, svc.Name, false, "selector removed")
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("watch exited %d", code)
	}
}

// bothMirror waits up to 30 s until our slices and the mirroring
// controller's for svc carry the same (both none when none is expected),
// and fails with both states otherwise. For none it also waits 2 s, for
// slices that should not come.
func bothMirror(t *testing.T, cp *controlplane.ControlPlane, ns, svc string, none bool, step string) {
	t.Helper()
	if none {
		time.Sleep(2 * time.Second)
	}
	var ours, theirs string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ours = mirrorCanonical(listSlices(t, cp, ns, svc, oursLabel))
		theirs = mirrorCanonical(listSlices(t, cp, ns, svc, mirroringManagedBy))
		if ours == theirs && (ours == "") == none {
			return
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(cp.Dir, "kube-controller-manager*")); len(logs) > 0 {
		if b, err := os.ReadFile(logs[0]); err == nil {
			t.Logf("kube-controller-manager log (end):\n%s", b[max(0, len(b)-3000):])
		}
	}
	t.Fatalf("%s %s: kubectl-slices --watch and the mirroring controller differ (none expected: %v)\n--- kubectl-slices\n%s--- kube-controller-manager\n%s",
		svc, step, none, ours, theirs)
}
