package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The loop's connection is cut (its proxy blackholed) while Pods flip, one
// is deleted and one added, and etcd is compacted past everything the loop
// saw; then the cut heals. The API server answers a watch resuming from
// before the cut with 410 Gone (checked by the test), so the loop must
// relist. Its slices equal the plan within 15 s of the heal, and no
// version of our slices written after the cut (recorded by the test's own
// watch, counted against the audit log's writes of ours) changes an
// endpoint to anything but its state in the API server then, and none
// leaves an endpoint as the cut found it: none reverts a change made during
// the cut or writes a state it made stale.
//
// kube-apiserver runs without its watch cache, which would answer the
// loop's watch from the compacted revision it still holds
// (controlplane.Compact).
//
// Flips tried: writing, as the loop would from a stale cache, our slice of
// web-0 back to its pre-cut state right after the heal (an update through
// the admin client) fails the stale-version check with that version; the
// loop without a broken watch counted as a lost connection (so no
// catch-up follows the heal) wrote a version still carrying an endpoint as
// the cut found it in 2 of 3 runs. Without the catch-up's wait for the
// relist's burst to settle it passed 2 of 2: that wait is held by its unit
// test alone.
func TestFaultWatchCutPastCompaction(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx, "--watch-cache=false")
	const ns = "compacted"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 363)
	for i := range 3 {
		f.addService(t, fmt.Sprintf("web-%d", i), 3)
	}
	grantLoopRights(t, cp, "replica-a")
	r := startFaultReplica(t, cp, "replica-a", "sync", "--watch", "--all", "-n", ns)
	within(t, "the loop publishes the plan", 30*time.Second, func() bool { return f.publishedBy(t, oursLabel) })
	time.Sleep(time.Second) // quiet: every write so far is seen before the cut
	rec := recordOurSlices(t, cp, ns)
	seen, err := cp.Admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}

	cut := time.Now()
	r.Proxy.Blackhole()
	for i := range 3 {
		f.flip(t, fmt.Sprintf("web-%d", i))
	}
	f.deletePod(t, "web-0")
	f.addPod(t, "web-1")
	if err := cp.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := controlplane.WatchStartError(cp.Admin.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: seen.ResourceVersion})); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("a watch from before the cut (resourceVersion %s) after Compact: %v, want 410 Gone", seen.ResourceVersion, err)
	}
	time.Sleep(5 * time.Second)
	healed := time.Now()
	r.Proxy.Pass()
	within(t, "our slices equal the plan after the heal", 15*time.Second, func() bool { return f.publishedBy(t, oursLabel) })
	time.Sleep(2 * time.Second) // a late stale write would land by now

	versions := rec.stop()
	reverts, incomplete, after := judgeVersions(f, versions, cut)
	t.Logf("cut %v; %d versions of our slices after it, %d of them left some endpoint as the cut found it",
		healed.Sub(cut).Round(time.Millisecond), len(after), len(incomplete))
	if len(incomplete) > 0 {
		// client-go applies a relist to its cache one object at a time;
		// the loop's catch-up waits for the burst to settle, so that no
		// write carries an endpoint the cut made stale.
		t.Errorf("writes of ours after the cut still carried endpoints as the cut found them:\n%s", strings.Join(incomplete, "\n"))
	}
	if len(reverts) > 0 {
		t.Errorf("writes of ours after the cut changed endpoints to stale states:\n%s", strings.Join(reverts, "\n"))
	}
	oursIn := func(l auditLog) auditLog { return l.writes(r.User, "endpointslices").succeeded().receivedAfter(cut) }
	writes := oursIn(auditUntil(t, cp, func(l auditLog) bool { return len(oursIn(l)) >= len(after) }))
	if len(writes) != len(after) {
		t.Errorf("the audit log has %d writes of ours after the cut, the watch saw %d versions:%s\n%s", len(writes), len(after), writes, strings.Join(after, "\n"))
	}
	if len(writes) == 0 {
		t.Error("no write of ours after the cut: the changes made during it were not published by a write")
	}
}

// judgeVersions replays the versions of our slices and, for each seen
// after cut, compares every endpoint it changes (in its Service's slices
// merged) with the plan: the Pods changed only before the heal, so the
// plan then is the fleet's final state. A change to anything else is a
// revert; a version that leaves some endpoint unlike the plan, changing
// only others rightly, is incomplete.
func judgeVersions(f *fleet, versions []sliceVersion, cut time.Time) (reverts, incomplete, after []string) {
	slices := map[string]sliceVersion{} // by slice name: the latest version
	merged := func(svc string) map[string]string {
		out := map[string]string{}
		for _, v := range slices {
			if v.svc == svc {
				for addr, st := range parseState(v.state) {
					out[addr] = st
				}
			}
		}
		return out
	}
	for _, v := range versions {
		before := merged(v.svc)
		if v.kind == watch.Deleted {
			delete(slices, v.name)
		} else {
			slices[v.name] = v
		}
		if v.seen.Before(cut) {
			continue
		}
		after = append(after, v.String())
		now, want := merged(v.svc), parseState(f.desired(v.svc))
		var wrong []string
		for _, addr := range sortedKeys(union(before, now)) {
			if before[addr] != now[addr] && now[addr] != want[addr] {
				wrong = append(wrong, fmt.Sprintf("%s %q→%q, the plan %q", addr, before[addr], now[addr], want[addr]))
			}
		}
		switch {
		case len(wrong) > 0:
			reverts = append(reverts, fmt.Sprintf("%s: %s", v, strings.Join(wrong, "; ")))
		case !sameState(now, want):
			incomplete = append(incomplete, v.String())
		}
	}
	return reverts, incomplete, after
}

// parseState splits endpointState's rendering into address → "ready:zone".
func parseState(s string) map[string]string {
	out := map[string]string{}
	for _, item := range strings.Fields(s) {
		addr, rest, _ := strings.Cut(item, ":")
		out[addr] = rest
	}
	return out
}

func union(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func sameState(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sliceVersion is one version of one of our slices, as a watch delivered it.
type sliceVersion struct {
	seen      time.Time
	kind      watch.EventType
	name, svc string
	state     string // endpoints as endpointState renders them; "" when deleted
}

func (v sliceVersion) String() string {
	return fmt.Sprintf("%s %s %s (svc/%s): %q", v.seen.Format("15:04:05.000"), v.kind, v.name, v.svc, v.state)
}

// sliceRecorder keeps every version of our slices in a namespace.
type sliceRecorder struct {
	mu       sync.Mutex
	versions []sliceVersion
	w        watch.Interface
	done     chan struct{}
}

// recordOurSlices records our slices of ns (admin, straight to the API
// server) as they are now, then every change from a watch, until stop. The
// present state comes from a list, recorded before this returns, so that
// it is never taken for a write seen later.
func recordOurSlices(t testing.TB, cp *controlplane.ControlPlane, ns string) *sliceRecorder {
	t.Helper()
	opts := metav1.ListOptions{LabelSelector: discovery.LabelManagedBy + "=" + oursLabel}
	list, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.ResourceVersion = list.ResourceVersion
	w, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).Watch(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := &sliceRecorder{w: w, done: make(chan struct{})}
	for i := range list.Items {
		rec.versions = append(rec.versions, versionOf("LISTED", &list.Items[i]))
	}
	go func() {
		defer close(rec.done)
		for ev := range w.ResultChan() {
			s, ok := ev.Object.(*discovery.EndpointSlice)
			if !ok {
				continue
			}
			rec.mu.Lock()
			rec.versions = append(rec.versions, versionOf(ev.Type, s))
			rec.mu.Unlock()
		}
	}()
	t.Cleanup(func() { rec.stop() })
	return rec
}

// versionOf renders one version of a slice as seen now.
func versionOf(kind watch.EventType, s *discovery.EndpointSlice) sliceVersion {
	v := sliceVersion{seen: time.Now(), kind: kind, name: s.Name, svc: s.Labels[discovery.LabelServiceName]}
	if kind != watch.Deleted {
		var eps []string
		for _, e := range s.Endpoints {
			eps = append(eps, fmt.Sprintf("%s:%v:%s", strings.Join(e.Addresses, ","), e.Conditions.Ready != nil && *e.Conditions.Ready, deref(e.Zone)))
		}
		sort.Strings(eps)
		v.state = strings.Join(eps, " ")
	}
	return v
}

// stop ends the watch and returns the versions seen.
func (r *sliceRecorder) stop() []sliceVersion {
	r.w.Stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sliceVersion(nil), r.versions...)
}
