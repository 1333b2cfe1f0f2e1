package e2e

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// frozenHold is the replicas' --handback-hold: short, so that the
// hand-back fits the test's minute.
const frozenHold = 5 * time.Second

// kube-controller-manager is frozen (SIGSTOP) beside two standby replicas,
// and a Pod turns ready: the leader takes the Service over (our first
// slice write within --takeover-after + 2 s of the change, audit time) and
// keeps its slices while the controller stays frozen, past the hold.
// Thawed (SIGCONT), the controller catches up and the leader hands back
// (its slices deleted once the controller's stayed current for the hold).
// Throughout, polled every 75 ms, the ready endpoints of the Service
// across every slice of every manager never lose an address: the test
// only ever adds ready Pods, so any loss is a drop a client would see.
//
// Flip tried: pkg/standby handing back once the hold has passed whether or
// not the controller's slices are current (Serving always moves to
// HandingBack, which no longer requires them current nor publishing every
// endpoint ours do): our slices are deleted while the controller is still
// frozen, and the test fails on both "deleted while the controller was
// still frozen" and the merged ready endpoints losing the new Pod's
// address.
func TestFaultControllerFrozen(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	const ns = "frozen"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 366)
	f.addService(t, "web", 6)
	for _, p := range sortedKeys(f.svcs["web"])[4:] {
		if err := cp.SetPodReady(ctx, ns, p, false); err != nil {
			t.Fatal(err)
		}
		f.svcs["web"][p].Ready = false
	}
	within(t, "the controller publishes the plan", 30*time.Second, func() bool { return f.publishedBy(t, controllerLabel) })

	grantLoopRights(t, cp, "replica-a", "replica-b")
	args := append([]string{"sync", "--watch", "--standby", "--all", "-n", ns, "--handback-hold", frozenHold.String()},
		electionFlags(calmLease, calmRenew, calmRetry)...)
	a := startFaultReplica(t, cp, "replica-a", args...)
	within(t, "replica-a holds the Lease", 30*time.Second, func() bool { return leaseHolder(t, cp) != "" })
	b := startFaultReplica(t, cp, "replica-b", args...)
	b.waitLine(t, "standing by", 30*time.Second)
	a.waitLine(t, "caches filled", 30*time.Second)

	watch := watchReadyUnion(t, cp, ns, "web")
	cp.FreezeControllerManager()
	changed := time.Now()
	pending := sortedKeys(f.svcs["web"])[4]
	if err := cp.SetPodReady(ctx, ns, pending, true); err != nil {
		t.Fatal(err)
	}
	f.svcs["web"][pending].Ready = true
	within(t, "our slices publish the new Pod", standbyThreshold+10*time.Second, func() bool { return f.publishedBy(t, oursLabel) })
	oursIn := func(l auditLog) auditLog {
		return append(l.writes(a.User, "endpointslices"), l.writes(b.User, "endpointslices")...).succeeded().byReceived()
	}
	ours := oursIn(auditUntil(t, cp, func(l auditLog) bool { return len(oursIn(l)) > 0 }))
	if len(ours) == 0 {
		t.Fatal("our slices appeared, but the audit log has no write of ours")
	}
	took := ours[0].Time.Sub(changed)
	t.Logf("takeover: first write of ours %v after the change", took.Round(time.Millisecond))
	if took > standbyThreshold+2*time.Second {
		t.Errorf("takeover: our first write %v after the change, want within %v", took, standbyThreshold+2*time.Second)
	}

	// Frozen for longer than the hold: ours must stay while the
	// controller's slices are stale, however long that is.
	time.Sleep(frozenHold + 2*time.Second)
	if n := oursCount(t, cp, ns, "web"); n == 0 {
		t.Error("our slices were deleted while the controller was still frozen")
	}
	cp.ThawControllerManager()
	within(t, "the thawed controller catches up", 20*time.Second, func() bool { return f.publishedBy(t, controllerLabel) })
	within(t, "handed back: no slice of ours left", frozenHold+15*time.Second, func() bool { return oursCount(t, cp, ns, "web") == 0 })
	if drops := watch.stop(); len(drops) > 0 {
		t.Errorf("the ready endpoints merged across managers lost addresses:\n%s", strings.Join(drops, "\n"))
	}
	t.Logf("%d polls of the merged ready endpoints", watch.polls)
}

// readyUnion polls the ready addresses of a Service across all its slices
// (every manager) and records each loss of an address seen before.
type readyUnion struct {
	mu    sync.Mutex
	polls int
	drops []string
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// watchReadyUnion polls every 75 ms until stop.
func watchReadyUnion(t testing.TB, cp *controlplane.ControlPlane, ns, svc string) *readyUnion {
	u := &readyUnion{quit: make(chan struct{}), done: make(chan struct{})}
	seen, missing := map[string]bool{}, map[string]bool{}
	go func() {
		defer close(u.done)
		for {
			list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(),
				metav1.ListOptions{LabelSelector: discovery.LabelServiceName + "=" + svc})
			if err != nil {
				t.Errorf("poll: %v", err)
				return
			}
			now := map[string]bool{}
			for _, s := range list.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						now[strings.Join(e.Addresses, ",")] = true
					}
				}
			}
			var lost []string
			for addr := range seen {
				switch {
				case now[addr]:
					delete(missing, addr)
				case !missing[addr]:
					missing[addr] = true // reported once per loss
					lost = append(lost, addr)
				}
			}
			sort.Strings(lost)
			u.mu.Lock()
			u.polls++
			if len(lost) > 0 {
				u.drops = append(u.drops, time.Now().Format("15:04:05.000")+" lost "+strings.Join(lost, ","))
			}
			u.mu.Unlock()
			for addr := range now {
				seen[addr] = true
			}
			select {
			case <-u.quit:
				return
			case <-time.After(75 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { u.stop() }) // before the cluster stops, if the test ends early
	return u
}

// stop ends the polling and returns the losses.
func (u *readyUnion) stop() []string {
	u.once.Do(func() { close(u.quit) })
	<-u.done
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.drops
}
