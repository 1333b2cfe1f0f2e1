package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// diff shows what sync would change: nothing where kube-controller-manager's
// slices are current (sync holds there), what sync --force would write with
// --force, and, once the controller has stopped and a Pod turned not ready,
// the slice sync would then create. The soak found diff -A planning a slice
// for every Service beside a healthy controller, which sync never writes.
//
// Flip tried: diff without the hold (its syncer.Options as before) exits 1
// beside the current controller.
func TestDiffBesideController(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	ns := "diff-kcm"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	mustService(t, cp, service(ns, "web"))
	mustService(t, cp, service(ns, "none")) // selects nothing: the controller writes an empty slice
	mustPods(t, cp, ns, podSpec("web", 0, 46), podSpec("web", 1, 46))
	within(t, "diff is empty: the controller's slices are current", 30*time.Second, func() bool {
		return kubectl(t, cp, "slices", "diff", "--all", "-n", ns).Code == 0
	})
	if r := kubectl(t, cp, "slices", "diff", "--all", "-n", ns).mustCode(t, 0); r.Stdout != "" {
		t.Errorf("diff printed changes beside a current controller:\n%s", r.Stdout)
	}
	if r := kubectl(t, cp, "slices", "diff", "--all", "-n", ns, "--force").mustCode(t, 1); strings.Count(r.Stdout, "+++ "+ns+"/endpointslice/") != 2 {
		t.Errorf("diff --force should create our two slices:\n%s", r.Stdout)
	}

	cp.KillControllerManager()
	if err := cp.SetPodReady(ctx, ns, "web-1", false); err != nil {
		t.Fatal(err)
	}
	r := kubectl(t, cp, "slices", "diff", "svc/web", "-n", ns).mustCode(t, 1)
	if !strings.Contains(r.Stdout, "+++ "+ns+"/endpointslice/web-") {
		t.Errorf("with the controller stopped and behind, diff shows no slice to create:\n%s", r.Stdout)
	}
}
