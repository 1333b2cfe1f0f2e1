package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Short lease times, so that the hand-over happens within the test's
// minute: the other replica takes the Lease 6 to about 10 s after the cut
// (the lease duration after the last renewal it saw, which it sees up to a
// jittered retry late, and a jittered retry). The cut-off leader stops
// leading 5 to 6 s after the cut (a retry, then the renew deadline) and
// then spends up to the renew deadline trying to release the Lease before
// it exits: with a 5 s deadline that attempt is under way, from a record
// the cut made stale, through most of the time the other may take it, so
// the heal finds the old leader still running, as a real partition would.
const (
	cutLease = 6 * time.Second
	cutRenew = 5 * time.Second
	cutRetry = 1 * time.Second
)

// The leader is cut off from the API server (its proxy blackholed) while
// Pods keep flipping, until the other replica holds the Lease; then the
// partition heals. From the audit log: the old leader's last slice write
// (any attempt) completed before the new leader's first arrived; the old
// leader never wrote the Lease after the new one acquired it (so never
// cleared its holder; a write refused with 409 changed nothing and is only
// logged); once reconnected it sent no slice write at all. It exits 4, as a
// replica that lost its Lease does by design, and the new leader's slices
// equal the plan.
//
// Before the fence (pkg/daemon fence.go) this failed: client-go
// released the Lease from its stale record, and writes planned before the
// loss were not fenced. Seen then: once reconnected, the old leader sent 5
// slice updates (4 succeeded) interleaved with the new leader's, and its
// release cleared the Lease the new leader held (200; the new leader's
// renewal then got 409), or, in other runs, was refused with 409. With the
// fence it passes.
//
// Flip tried, the other way: the partition never healed (the old leader
// exits cut off) passes, so the checks ask no more of a fence than that
// the old leader, reconnected, behaves as if it were still cut off.
func TestFaultLeaderCutOff(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx)
	const ns = "cutoff"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 364)
	for i := range 3 {
		f.addService(t, fmt.Sprintf("web-%d", i), 3)
	}
	grantLoopRights(t, cp, "replica-a", "replica-b")
	args := append([]string{"sync", "--watch", "--all", "-n", ns}, electionFlags(cutLease, cutRenew, cutRetry)...)
	a := startFaultReplica(t, cp, "replica-a", args...)
	within(t, "replica-a holds the Lease", 30*time.Second, func() bool { return leaseHolder(t, cp) != "" })
	aID := leaseHolder(t, cp)
	b := startFaultReplica(t, cp, "replica-b", args...)
	b.waitLine(t, "standing by", 30*time.Second)
	within(t, "the leader publishes the plan", 30*time.Second, func() bool { return f.publishedBy(t, oursLabel) })

	stopChurn := churnFlips(t, f, 150*time.Millisecond)
	time.Sleep(2 * time.Second) // the leader writes under churn
	cut := time.Now()
	a.Proxy.Blackhole()
	within(t, "replica-b holds the Lease", 30*time.Second, func() bool {
		h := leaseHolder(t, cp)
		return h != "" && h != aID
	})
	healed := time.Now()
	a.Proxy.Pass()
	time.Sleep(5 * time.Second) // churn on: the new leader writes; the old one must not
	t.Logf("%d flips", stopChurn())
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the old leader still runs 30 s after the partition healed")
	}
	if code := exitCode(a.err); code != ExitLeaseLost {
		t.Errorf("the old leader exited %d, want %d", code, ExitLeaseLost)
	}
	within(t, "the new leader publishes the plan", 20*time.Second, func() bool { return f.publishedBy(t, oursLabel) })

	audit := auditUntil(t, cp, func(l auditLog) bool {
		return len(l.writes(a.User, "endpointslices")) > 0 && len(l.writes(b.User, "endpointslices")) > 0 &&
			len(l.writes(b.User, "leases").succeeded()) > 0
	})
	aSlices := audit.writes(a.User, "endpointslices").byReceived()
	bSlices := audit.writes(b.User, "endpointslices").byReceived()
	bLease := audit.writes(b.User, "leases").succeeded().byReceived()
	if len(aSlices) == 0 || len(bSlices) == 0 || len(bLease) == 0 {
		t.Fatalf("the audit log lacks the leaders' writes: old leader's slices %d, new leader's slices %d, new leader's Lease %d",
			len(aSlices), len(bSlices), len(bLease))
	}
	// A standby writes the Lease only to take it: its first write is the
	// acquisition.
	acquired := bLease[0]
	if last, first := aSlices[len(aSlices)-1], bSlices[0]; !last.Time.Before(first.Received) {
		t.Errorf("the old leader's last slice write (done %s) does not precede the new leader's first (arrived %s):\nold:%s\nnew:%s",
			last.Time.Format("15:04:05.000000"), first.Received.Format("15:04:05.000000"), aSlices, bSlices)
	}
	// Refused writes of the Lease (409) changed nothing: logged, not
	// failed.
	var late, refused auditLog
	for _, e := range audit.writes(a.User, "leases") {
		switch {
		case !e.Time.After(acquired.Time):
		case e.Code >= 200 && e.Code < 300:
			late = append(late, e)
		default:
			refused = append(refused, e)
		}
	}
	if len(late) > 0 {
		t.Errorf("the old leader wrote the Lease after the new leader acquired it (%s):%s", acquired.Time.Format("15:04:05.000000"), late)
	}
	if len(refused) > 0 {
		t.Logf("the old leader tried to write the Lease after the new leader acquired it, refused:%s", refused)
	}
	if w := audit.writes(a.User, "endpointslices").receivedAfter(healed); len(w) > 0 {
		t.Errorf("once reconnected, the old leader wrote slices:%s", w)
	}
	if h := leaseHolder(t, cp); h == aID || h == "" {
		t.Errorf("the Lease is held by %q at the end, want the new leader", h)
	}
	if t.Failed() {
		t.Logf("the Lease's writes (cut %s, healed %s):%s", cut.Format("15:04:05.000000"), healed.Format("15:04:05.000000"), audit.writes("", "leases").byReceived())
	}
}
