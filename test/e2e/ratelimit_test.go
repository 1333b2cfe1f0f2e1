package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fairness turns API Priority and Fairness on, as in a real cluster; the
// shared test cluster runs without it.
const fairness = "--enable-priority-and-fairness=true"

const liftedLine = "client-side rate limits lifted"

// The plugin lifts its default client-side limits once the API server
// shows API Priority and Fairness, keeps them without it, and keeps limits
// the user gave.
func TestRateLimitsLiftedByFairness(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fair := ownCluster(t, ctx, fairness)
	for _, cp := range []struct {
		name string
		fair bool
	}{{"fair", true}, {"shared", false}} {
		c := shared
		if cp.fair {
			c = fair
		}
		ns := newNamespace(t, c)
		mustService(t, c, service(ns, "web"))
		mustPods(t, c, ns, podSpec("web", 0, 1))
		for _, given := range [][]string{nil, {"--qps", "50"}} {
			r := kubectl(t, c, append([]string{"slices", "sync", "svc/web", "-n", ns, "-v", "1"}, given...)...)
			r.mustCode(t, 0)
			want := cp.fair && given == nil
			if got := strings.Contains(r.Stderr, liftedLine); got != want {
				t.Errorf("%s cluster, flags %v: %q said %v, want %v; stderr:\n%s", cp.name, given, liftedLine, got, want, r.Stderr)
			}
		}
	}
	// The watch loop's client too.
	ns := newNamespace(t, fair)
	w := startWatch(t, fair, fair.Kubeconfig, "sync", "--watch", "--all", "-n", ns, "-v", "1")
	w.waitLine(t, "caches filled", time.Minute)
	w.waitLine(t, liftedLine, 10*time.Second)
	w.stop(t, syscall.SIGTERM)
}
