package e2e

import (
	"context"
	"sort"
	"testing"
	"time"
)

// slowDelay is the proxy's delay each way: a round trip to the API server
// costs 600 ms, a slow cross-region link.
const slowDelay = 300 * time.Millisecond

// slowFlips is how many readiness flips the test makes, one at a time.
const slowFlips = 8

// The loop's connection to the API server is slow (300 ms each way): every
// one of 8 readiness flips, made one at a time, reaches our slices (read
// from the API server, polled every 10 ms), each within 10 s; the audit
// log has a write of ours for each. p50 and max are logged.
//
// Flip tried: Blackhole in place of Delay fails the first flip at 10 s.
func TestFaultSlowAPIServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx)
	const ns = "slow"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 367)
	f.addService(t, "web", 4)
	grantLoopRights(t, cp, "replica-a")
	r := startFaultReplica(t, cp, "replica-a", "sync", "--watch", "--all", "-n", ns)
	within(t, "the loop publishes the plan", 30*time.Second, func() bool { return f.publishedBy(t, oursLabel) })

	r.Proxy.Delay(slowDelay)
	slowed := time.Now()
	var took []time.Duration
	for range slowFlips {
		start := time.Now()
		f.flip(t, "web")
		within(t, "a flip reaches our slices", 10*time.Second, func() bool { return f.publishedBy(t, oursLabel) })
		took = append(took, time.Since(start)) // from before the flip's write
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("flip to our slices through a %v-each-way link: p50 %v, max %v (%d flips)",
		slowDelay, took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), len(took))
	oursIn := func(l auditLog) auditLog { return l.writes(r.User, "endpointslices").succeeded().receivedAfter(slowed) }
	if w := oursIn(auditUntil(t, cp, func(l auditLog) bool { return len(oursIn(l)) >= slowFlips })); len(w) < slowFlips {
		t.Errorf("%d writes of ours in the audit log for %d flips:%s", len(w), slowFlips, w)
	}
}
