package standby

import (
	"fmt"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

const ours = "kubectl-slices"

var cfg = Config{TakeoverAfter: 5 * time.Second, HandbackHold: 30 * time.Second, ManagedBy: ours}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// slice publishes one endpoint per readiness given, 10.0.0.1 upwards.
func slice(managedBy string, ready ...bool) *discovery.EndpointSlice {
	s := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: managedBy + "-x", Namespace: "ns", Labels: map[string]string{discovery.LabelManagedBy: managedBy, discovery.LabelServiceName: "web"}},
		AddressType: discovery.AddressTypeIPv4,
	}
	for i, r := range ready {
		r := r
		s.Endpoints = append(s.Endpoints, discovery.Endpoint{Addresses: []string{fmt.Sprintf("10.0.0.%d", i+1)}, Conditions: discovery.EndpointConditions{Ready: &r}})
	}
	return s
}

func in(now time.Time, observed time.Time, desired *discovery.EndpointSlice, live ...*discovery.EndpointSlice) Input {
	return Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{desired}, Live: live, Observed: observed, Now: now}
}

func TestStandbyHoldsWhileControllerCurrent(t *testing.T) {
	want := slice(ours, true, false)
	d := Decide(cfg, Memory{State: Standby}, in(t0, t0, want, slice(reconcile.ControllerManagedBy, true, false)))
	if d.Action != Hold || d.Memory.State != Standby || d.Event != NoEvent || d.RequeueAfter != 0 || !d.Memory.Behind.IsZero() {
		t.Fatalf("current controller: got %+v", d)
	}
}

// The age of a difference starts when the loop observed the change that
// caused it: a change observed 3 s ago waits 2 s more.
func TestTakeoverCountsFromTheObservation(t *testing.T) {
	want := slice(ours, true, true)
	stale := slice(reconcile.ControllerManagedBy, true, false)
	d := Decide(cfg, Memory{State: Standby}, in(t0, t0.Add(-3*time.Second), want, stale))
	if d.Action != Hold || d.Memory.State != Standby || d.RequeueAfter != 2*time.Second {
		t.Fatalf("3 s behind: got action %v state %s requeue %s", d.Action, d.Memory.State, d.RequeueAfter)
	}
	if !d.Memory.Behind.Equal(t0.Add(-3 * time.Second)) {
		t.Fatalf("behind since %s, want the observation", d.Memory.Behind)
	}
	// Requeued: no new change (zero observation), the remembered one counts.
	d = Decide(cfg, d.Memory, in(t0.Add(2*time.Second), time.Time{}, want, stale))
	if d.Action != Write || d.Memory.State != Serving || d.Event != TakenOver {
		t.Fatalf("at the threshold: got action %v state %s event %q", d.Action, d.Memory.State, d.Event)
	}
}

// On the loop's first look at a Service: one the controller has published
// no slice for is dated from the Service's creation (taken over at once
// when that is older than the threshold); one whose controller slices
// differ is dated now, whatever the Service's age.
func TestFirstLook(t *testing.T) {
	want := slice(ours, true, true)
	stale := slice(reconcile.ControllerManagedBy, true, false)
	old := t0.Add(-10 * time.Minute)
	first := in(t0, time.Time{}, want)
	first.Created = old
	d := Decide(cfg, Initial(cfg, nil), first)
	if d.Action != Write || d.Event != TakenOver || d.Memory.Fresh {
		t.Fatalf("never published for minutes: got action %v event %q fresh %v", d.Action, d.Event, d.Memory.Fresh)
	}
	// An observation kept unsynced since long ago (a replica waiting for
	// the lease) does not date it either.
	first = in(t0, old, want, stale)
	first.Created = old
	d = Decide(cfg, Initial(cfg, first.Live), first)
	if d.Action != Hold || !d.Memory.Behind.Equal(t0) || d.RequeueAfter != cfg.TakeoverAfter {
		t.Fatalf("published but stale on the first look: got %+v", d)
	}
	// Not the first look: the Service's age does not count.
	later := in(t0, time.Time{}, want)
	later.Created = old
	d = Decide(cfg, Memory{State: Standby}, later)
	if d.Action != Hold || !d.Memory.Behind.Equal(t0) {
		t.Fatalf("no slices after a first look: got %+v", d)
	}
}

func TestUnknownOrFutureCauseDatesNow(t *testing.T) {
	want := slice(ours, true)
	for _, cause := range []time.Time{{}, t0.Add(time.Hour)} {
		d := Decide(cfg, Memory{State: Standby}, in(t0, cause, want))
		if d.Action != Hold || !d.Memory.Behind.Equal(t0) || d.RequeueAfter != cfg.TakeoverAfter {
			t.Fatalf("cause %s: got %+v", cause, d)
		}
	}
}

func TestNoControllerSlicesTakenOver(t *testing.T) {
	want := slice(ours, true)
	d := Decide(cfg, Memory{State: Standby, Behind: t0.Add(-6 * time.Second)}, in(t0, time.Time{}, want))
	if d.Action != Write || d.Event != TakenOver {
		t.Fatalf("got %+v", d)
	}
}

// Closing a difference reports its age, from the cause.
func TestLagObservedWhenControllerCatchesUp(t *testing.T) {
	want := slice(ours, true)
	d := Decide(cfg, Memory{State: Standby, Behind: t0.Add(-1500 * time.Millisecond)}, in(t0, time.Time{}, want, slice(reconcile.ControllerManagedBy, true)))
	if !d.Closed || d.Lag != 1500*time.Millisecond || d.Action != Hold || !d.Memory.Behind.IsZero() {
		t.Fatalf("got closed %v lag %s action %v", d.Closed, d.Lag, d.Action)
	}
}

// Hand-back: held for the hold period, interrupted when the controller
// differs again, and deleting ours only when the controller's publish the
// same endpoints.
func TestHandback(t *testing.T) {
	want := slice(ours, true, true)
	good := slice(reconcile.ControllerManagedBy, true, true)
	bad := slice(reconcile.ControllerManagedBy, true)
	mine := slice(ours, true, true)
	d := Decide(cfg, Memory{State: Serving, Behind: t0.Add(-time.Minute)}, in(t0, time.Time{}, want, good, mine))
	if d.Action != Write || d.Memory.State != HandingBack || d.RequeueAfter != cfg.HandbackHold || !d.Closed || d.Lag != time.Minute {
		t.Fatalf("controller back: got %+v", d)
	}
	hb := d.Memory
	d = Decide(cfg, hb, in(t0.Add(10*time.Second), time.Time{}, want, good, mine))
	if d.Action != Write || d.Memory.State != HandingBack || d.RequeueAfter != 20*time.Second {
		t.Fatalf("within the hold: got action %v state %s requeue %s", d.Action, d.Memory.State, d.RequeueAfter)
	}
	d = Decide(cfg, hb, in(t0.Add(20*time.Second), t0.Add(14*time.Second), want, bad, mine))
	if d.Action != Write || d.Memory.State != Serving || d.Event != NoEvent {
		t.Fatalf("controller differs again for 6 s: got action %v state %s", d.Action, d.Memory.State)
	}
	// Ours stale (one endpoint not ready, the controller's ready): not yet.
	d = Decide(cfg, hb, in(t0.Add(30*time.Second), time.Time{}, want, good, slice(ours, true, false)))
	if d.Action != Write || d.Memory.State != HandingBack || d.RequeueAfter <= 0 {
		t.Fatalf("ours differ: got action %v state %s", d.Action, d.Memory.State)
	}
	d = Decide(cfg, hb, in(t0.Add(30*time.Second), time.Time{}, want, good, mine))
	if d.Action != HandBack || d.Memory.State != Standby || d.Event != HandedBack || len(d.Judgement.Ours) != 1 {
		t.Fatalf("after the hold: got action %v state %s event %q", d.Action, d.Memory.State, d.Event)
	}
}

// A loop that finds slices of ours serves, and hands them back only after
// the hold, also when the controller is current from the start.
func TestInitialWithOursHandsBackAfterHold(t *testing.T) {
	want := slice(ours, true)
	live := []*discovery.EndpointSlice{slice(reconcile.ControllerManagedBy, true), slice(ours, true)}
	m := Initial(cfg, live)
	if m.State != Serving {
		t.Fatalf("initial with ours: %s", m.State)
	}
	d := Decide(cfg, m, Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{want}, Live: live, Now: t0})
	if d.Action != Write || d.Memory.State != HandingBack {
		t.Fatalf("got action %v state %s", d.Action, d.Memory.State)
	}
	if Initial(cfg, live[:1]).State != Standby {
		t.Fatal("initial without ours is not standby")
	}
}

// The mirroring controller's slices count for a Service it mirrors, the
// EndpointSlice controller's do not.
func TestControllerNamed(t *testing.T) {
	want := slice(ours, true)
	live := []*discovery.EndpointSlice{slice(reconcile.ControllerManagedBy, true)}
	d := Decide(cfg, Memory{State: Standby}, Input{Controller: reconcile.MirroringManagedBy, Desired: []*discovery.EndpointSlice{want}, Live: live, Now: t0})
	if d.Action != Hold || d.Memory.Behind.IsZero() {
		t.Fatalf("another controller's slices counted: %+v", d)
	}
}

// The controller's slices of a deleted Service of the same name (another
// owner UID) do not count as publishing the re-created one.
func TestOldServiceSlicesDoNotCount(t *testing.T) {
	want := slice(ours, true)
	old := slice(reconcile.ControllerManagedBy, true)
	old.OwnerReferences = []metav1.OwnerReference{{Kind: "Service", Name: "web", UID: "old"}}
	d := Decide(cfg, Memory{State: Standby}, Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{want},
		Live: []*discovery.EndpointSlice{old}, ServiceUID: "new", Now: t0})
	if d.Action != Hold || d.Memory.Behind.IsZero() || len(d.Judgement.Controller) != 0 {
		t.Fatalf("old Service's slices counted: %+v", d)
	}
	old.OwnerReferences[0].UID = "new"
	d = Decide(cfg, Memory{State: Standby}, Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{want},
		Live: []*discovery.EndpointSlice{old}, ServiceUID: "new", Now: t0})
	if !d.Memory.Behind.IsZero() {
		t.Fatalf("own slices not counted: %+v", d)
	}
	// A foreign Service reference beside the right one (a tenant's, or
	// left over) leaves the slice the Service's: no takeover, however long
	// the standby has waited.
	old.OwnerReferences = []metav1.OwnerReference{{Kind: "Service", Name: "other", UID: "other"}, {Kind: "Service", Name: "web", UID: "new"}}
	d = Decide(cfg, Memory{State: Standby, Behind: t0.Add(-time.Minute)}, Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{want},
		Live: []*discovery.EndpointSlice{old}, ServiceUID: "new", Now: t0})
	if d.Action != Hold || d.Event == TakenOver || !d.Memory.Behind.IsZero() || len(d.Judgement.Controller) != 1 {
		t.Fatalf("a slice with a second Service reference was not counted: action %v event %q %+v", d.Action, d.Event, d)
	}
	// No Service reference at all names no other Service (explain's
	// ownerMismatch neither): the slice counts.
	old.OwnerReferences = nil
	d = Decide(cfg, Memory{State: Standby}, Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{want},
		Live: []*discovery.EndpointSlice{old}, ServiceUID: "new", Now: t0})
	if !d.Memory.Behind.IsZero() || len(d.Judgement.Controller) != 1 {
		t.Fatalf("a slice without owner reference was not counted: %+v", d)
	}
}

// Slices of ours found in standby (a hand-back whose delete failed) are
// handed back the careful way: after the hold, not at once.
func TestOursInStandbyHandedBackAfterHold(t *testing.T) {
	want := slice(ours, true)
	live := []*discovery.EndpointSlice{slice(reconcile.ControllerManagedBy, true), slice(ours, true)}
	d := Decide(cfg, Memory{State: Standby}, Input{Controller: reconcile.ControllerManagedBy, Desired: []*discovery.EndpointSlice{want}, Live: live, Now: t0})
	if d.Action != Write || d.Memory.State != HandingBack || d.RequeueAfter != cfg.HandbackHold {
		t.Fatalf("got action %v state %s requeue %s", d.Action, d.Memory.State, d.RequeueAfter)
	}
}

// A difference the desired state walks back to before the controller
// writes (a Pod flipped and flipped back) is not the controller's doing:
// no closure, so no other Service's clock restarts on it.
func TestWalkedBackIsNoClosure(t *testing.T) {
	want := slice(ours, true, true)
	stale := slice(reconcile.ControllerManagedBy, true, false)
	d := Decide(cfg, Memory{State: Standby}, in(t0, t0, want, stale))
	d = Decide(cfg, d.Memory, in(t0.Add(time.Second), time.Time{}, want, stale))
	d = Decide(cfg, d.Memory, in(t0.Add(2*time.Second), time.Time{}, slice(ours, true, false), stale))
	if d.Closed || !d.Memory.Behind.IsZero() || d.Action != Hold {
		t.Fatalf("walked back: closed %v behind %s action %v", d.Closed, d.Memory.Behind, d.Action)
	}
	// The controller writing while behind, then current: a closure, also
	// when its last write was already seen before the close.
	written := slice(reconcile.ControllerManagedBy, true, false)
	written.Generation = 2
	d = Decide(cfg, Memory{State: Standby}, in(t0, t0, want, stale))
	d = Decide(cfg, d.Memory, in(t0.Add(time.Second), time.Time{}, want, written))
	d = Decide(cfg, d.Memory, in(t0.Add(2*time.Second), time.Time{}, slice(ours, true, false), written))
	if !d.Closed || d.Lag != 2*time.Second {
		t.Fatalf("written then current: closed %v lag %s", d.Closed, d.Lag)
	}
	// The next difference starts afresh: walked back, it is no closure.
	d = Decide(cfg, d.Memory, in(t0.Add(3*time.Second), t0.Add(3*time.Second), want, written))
	d = Decide(cfg, d.Memory, in(t0.Add(4*time.Second), time.Time{}, slice(ours, true, false), written))
	if d.Closed {
		t.Fatal("a walked-back difference after a closure counted as a closure")
	}
}

// Under churn the controller always has a change to reflect: one it
// reflects within the takeover threshold keeps the hold running, one it
// leaves longer sends the Service back to serving.
func TestHandbackHoldRunsThroughChurn(t *testing.T) {
	want := slice(ours, true, true)
	good := slice(reconcile.ControllerManagedBy, true, true)
	good.Generation = 2 // the controller's write of the change
	behind := slice(reconcile.ControllerManagedBy, true, false)
	mine := slice(ours, true, true)
	hb := Memory{State: HandingBack, CurrentSince: t0}
	d := Decide(cfg, hb, in(t0.Add(20*time.Second), t0.Add(19*time.Second), want, behind, mine))
	if d.Action != Write || d.Memory.State != HandingBack || !d.Memory.CurrentSince.Equal(t0) || d.RequeueAfter != 4*time.Second {
		t.Fatalf("young difference in the hold: action %v state %s since %s requeue %s", d.Action, d.Memory.State, d.Memory.CurrentSince, d.RequeueAfter)
	}
	closed := Decide(cfg, d.Memory, in(t0.Add(30*time.Second), time.Time{}, want, good, mine))
	if closed.Action != HandBack || closed.Event != HandedBack || !closed.Closed {
		t.Fatalf("reflected within the threshold, hold over: action %v state %s", closed.Action, closed.Memory.State)
	}
	late := Decide(cfg, d.Memory, in(t0.Add(24*time.Second), time.Time{}, want, behind, mine))
	if late.Action != Write || late.Memory.State != Serving || !late.Memory.CurrentSince.IsZero() {
		t.Fatalf("left past the threshold: action %v state %s", late.Action, late.Memory.State)
	}
}
