package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// The bounds the loop states for its probes on a silent API server: /readyz
// fails once nothing was heard from it for readySilence, /healthz for
// healthSilence. They are main's (pkg/daemon), not merged yet: read them
// from the code once they are.
const (
	readySilence  = 15 * time.Second
	healthSilence = 60 * time.Second
)

// healthCut is how long the replica is cut off: past readySilence, short
// of healthSilence.
const healthCut = 40 * time.Second

// One replica is cut off from the API server (its proxy blackholed) for
// 40 s: its /readyz turns non-200 within readySilence (+1 s for the polls)
// of the cut, its /healthz stays 200 (the cut is shorter than
// healthSilence: a restart would not help), and /readyz answers 200 again
// within 10 s of the heal.
func TestFaultHealthTellsTheTruth(t *testing.T) {
	t.Skip("waiting for main: /readyz and /healthz do not yet fail when the API server is silent; take readySilence and healthSilence from pkg/daemon once that is merged")
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx)
	const ns = "health"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 365)
	f.addService(t, "web", 2)
	grantLoopRights(t, cp, "replica-a")
	r := startFaultReplica(t, cp, "replica-a", "sync", "--watch", "--all", "-n", ns)
	status := func(path string) int { c, _ := r.get(path); return c }
	within(t, "ready", 30*time.Second, func() bool { return status("/readyz") == http.StatusOK })

	cut := time.Now()
	r.Proxy.Blackhole()
	var unready time.Duration
	for time.Since(cut) < healthCut {
		if c := status("/readyz"); c != http.StatusOK && unready == 0 {
			unready = time.Since(cut)
			t.Logf("/readyz %d after %v of silence", c, unready.Round(time.Millisecond))
		}
		if c := status("/healthz"); c != http.StatusOK {
			t.Errorf("/healthz %d after %v of silence, before %v", c, time.Since(cut).Round(time.Millisecond), healthSilence)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	switch {
	case unready == 0:
		t.Errorf("/readyz stayed 200 through %v of silence, want non-200 within %v", healthCut, readySilence+time.Second)
	case unready > readySilence+time.Second:
		t.Errorf("/readyz turned non-200 after %v of silence, want within %v", unready, readySilence+time.Second)
	}
	r.Proxy.Pass()
	within(t, "/readyz after the heal", 10*time.Second, func() bool { return status("/readyz") == http.StatusOK })
}
