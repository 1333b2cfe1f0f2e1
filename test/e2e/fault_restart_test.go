package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// Lease times for tests whose subject is not the election: long enough
// that a kube-apiserver restart on a loaded machine (up to ~15 s) does not
// cost the leader its Lease, which would turn the test into one of the
// hand-over.
const (
	calmLease = 40 * time.Second
	calmRenew = 30 * time.Second
	calmRetry = 2 * time.Second
)

// kube-apiserver restarts beside a healthy kube-controller-manager: the
// standby replicas write no slice through the outage and the relists after
// it (audit log), the leader's /readyz answers 200 again and its renewals
// reach the restarted server (audit log), and the safety
// net still works afterwards: once the controller is killed, a Pod's flip
// is published by our first slice write within --takeover-after + 2 s of
// the change (audit time).
//
// Flip tried: --standby left out of the replicas' flags (a leader that
// writes its own slices beside the controller's) fails the first check,
// listing the leader's three creates from the audit log.
func TestFaultAPIServerRestartBesideController(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	const ns = "restart"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 361)
	for i := range 3 {
		f.addService(t, fmt.Sprintf("web-%d", i), 3)
	}
	controllerCurrent(t, cp, f, 30*time.Second)

	grantLoopRights(t, cp, "replica-a", "replica-b")
	args := append([]string{"sync", "--watch", "--standby", "--all", "-A"}, electionFlags(calmLease, calmRenew, calmRetry)...)
	a := startFaultReplica(t, cp, "replica-a", args...)
	within(t, "replica-a holds the Lease", 30*time.Second, func() bool { return leaseHolder(t, cp) != "" })
	b := startFaultReplica(t, cp, "replica-b", args...)
	b.waitLine(t, "standing by", 30*time.Second)
	readyz := func(r *faultReplica) func() bool {
		return func() bool { c, _ := r.get("/readyz"); return c == http.StatusOK }
	}
	within(t, "the leader ready", 30*time.Second, readyz(a))

	cp.StopAPIServer()
	time.Sleep(3 * time.Second) // long enough for every watch and the renewals to fail
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	// Ready, and talking to the restarted server: its renewals resumed.
	within(t, "the leader's /readyz after the restart", 30*time.Second, readyz(a))
	within(t, "the leader renews the Lease through the restarted API server", 30*time.Second, func() bool {
		return len(readAudit(t, cp).writes(a.User, "leases").succeeded().receivedAfter(up)) > 0
	})
	controllerCurrent(t, cp, f, 30*time.Second)
	time.Sleep(standbyThreshold + 2*time.Second) // a takeover would have happened by now
	audit := readAudit(t, cp)
	for _, r := range []*faultReplica{a, b} {
		if w := audit.writes(r.User, "endpointslices"); len(w) > 0 {
			t.Fatalf("beside a healthy controller, %s wrote slices:%s", r.Name, w)
		}
	}

	// The safety net still works: the controller dies, a Pod flips.
	cp.KillControllerManager()
	const svc = "web-0"
	changed := time.Now()
	f.flip(t, svc)
	within(t, "our slices publish the flip", 20*time.Second, func() bool {
		by, _ := sliceStates(t, cp, ns)
		return by[oursLabel][svc] == f.desired(svc)
	})
	oursIn := func(l auditLog) auditLog {
		return append(l.writes(a.User, "endpointslices"), l.writes(b.User, "endpointslices")...).succeeded().byReceived()
	}
	ours := oursIn(auditUntil(t, cp, func(l auditLog) bool { return len(oursIn(l)) > 0 }))
	if len(ours) == 0 {
		t.Fatal("our slices changed, but the audit log has no write of ours")
	}
	took := ours[0].Time.Sub(changed)
	t.Logf("first write of ours %v after the flip (--takeover-after %v)", took.Round(time.Millisecond), standbyThreshold)
	if took > standbyThreshold+2*time.Second {
		t.Errorf("takeover: our first write %v after the change, want within %v", took, standbyThreshold+2*time.Second)
	}
}
