package standby

import (
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// written is the controller's slice as it writes it: a generation the API
// server bumps on each write.
func written(gen int64, ready ...bool) *discovery.EndpointSlice {
	s := slice(reconcile.ControllerManagedBy, ready...)
	s.UID, s.Generation = "theirs", gen
	return s
}

// A controller that keeps writing the Service's slices, if behind the
// latest change (churn), is at work: each write restarts the clock; one
// that stops writing is taken over a threshold after its last write.
func TestControllerWritesRestartTheClock(t *testing.T) {
	want := slice(ours, true, true)
	d := Decide(cfg, Memory{State: Standby}, in(t0, t0, want, written(1, true)))
	for i, gen := range []int64{2, 3, 4} {
		now := t0.Add(time.Duration(4*(i+1)) * time.Second)
		d = Decide(cfg, d.Memory, in(now, time.Time{}, want, written(gen, true, false)))
		if d.Action != Hold || !d.Memory.Since.Equal(now) || d.RequeueAfter != cfg.TakeoverAfter {
			t.Fatalf("write %d at %s: got action %v since %s requeue %s", gen, now.Sub(t0), d.Action, d.Memory.Since.Sub(t0), d.RequeueAfter)
		}
	}
	// Opened at the first observation still, for the lag reported.
	if !d.Memory.Behind.Equal(t0) {
		t.Fatalf("behind %s, want the first observation", d.Memory.Behind)
	}
	d = Decide(cfg, d.Memory, in(t0.Add(16*time.Second), time.Time{}, want, written(4, true, false)))
	if d.Action != Hold || d.RequeueAfter != time.Second {
		t.Fatalf("4 s after the last write: got action %v requeue %s", d.Action, d.RequeueAfter)
	}
	d = Decide(cfg, d.Memory, in(t0.Add(17*time.Second), time.Time{}, want, written(4, true, false)))
	if d.Action != Write || d.Event != TakenOver {
		t.Fatalf("a threshold after the last write: got action %v event %q", d.Action, d.Event)
	}
}

// The controller closing older differences elsewhere (its backlog) restarts
// the clock at the closure; a closure later than now is ignored.
func TestProgressOnOlderDifferencesRestartsTheClock(t *testing.T) {
	want := slice(ours, true, true)
	stale := written(1, true)
	d := Decide(cfg, Memory{State: Standby}, in(t0, t0, want, stale))
	next := in(t0.Add(6*time.Second), time.Time{}, want, stale)
	next.Progress = t0.Add(4 * time.Second)
	got := Decide(cfg, d.Memory, next)
	if got.Action != Hold || !got.Memory.Since.Equal(next.Progress) || got.RequeueAfter != 3*time.Second {
		t.Fatalf("progress 2 s ago: got action %v since %s requeue %s", got.Action, got.Memory.Since.Sub(t0), got.RequeueAfter)
	}
	next.Progress = t0.Add(time.Minute)
	if got = Decide(cfg, d.Memory, next); got.Action != Write || got.Event != TakenOver {
		t.Fatalf("progress in the future: got action %v event %q", got.Action, got.Event)
	}
	next.Progress = time.Time{}
	if got = Decide(cfg, d.Memory, next); got.Action != Write || got.Event != TakenOver {
		t.Fatalf("no progress: got action %v event %q", got.Action, got.Event)
	}
}

// Closures count for a difference opened at or after them, the latest
// wins, and those older than keep are forgotten.
func TestClosures(t *testing.T) {
	var c Closures
	keep := 5 * time.Second
	c.Add(Closure{Opened: t0, Closed: t0.Add(2 * time.Second)}, keep)
	c.Add(Closure{Opened: t0.Add(time.Second), Closed: t0.Add(3 * time.Second)}, keep)
	c.Add(Closure{Opened: t0, Closed: t0.Add(2500 * time.Millisecond)}, keep)
	cases := []struct {
		opened, want time.Time
	}{
		{t0.Add(-time.Millisecond), time.Time{}},
		{t0, t0.Add(2500 * time.Millisecond)},
		{t0.Add(time.Second), t0.Add(3 * time.Second)},
		{time.Time{}, time.Time{}},
	}
	for _, tc := range cases {
		if got := c.Latest(tc.opened); !got.Equal(tc.want) {
			t.Errorf("Latest(%s) = %s, want %s", tc.opened, got, tc.want)
		}
	}
	c.Add(Closure{Opened: t0.Add(7 * time.Second), Closed: t0.Add(7500 * time.Millisecond)}, keep)
	if c.Len() != 3 {
		t.Fatalf("kept %d closures, want 3 (closed within %s of the last)", c.Len(), keep)
	}
	c.Add(Closure{Opened: t0.Add(9 * time.Second), Closed: t0.Add(9 * time.Second)}, keep)
	if c.Len() != 2 || !c.Latest(t0).IsZero() {
		t.Fatalf("kept %d closures, Latest(t0) %s; want 2 and none", c.Len(), c.Latest(t0))
	}
}

// Closing a difference reports when it opened, for Closures.
func TestClosedReportsOpened(t *testing.T) {
	want := slice(ours, true)
	d := Decide(cfg, Memory{State: Standby}, in(t0, t0.Add(-time.Second), want, written(1)))
	d = Decide(cfg, d.Memory, in(t0.Add(time.Second), time.Time{}, want, written(2, true)))
	if !d.Closed || !d.Opened.Equal(t0.Add(-time.Second)) || d.Lag != 2*time.Second || !d.Memory.Since.IsZero() || d.Memory.Theirs != "" {
		t.Fatalf("got closed %v opened %s lag %s memory %+v", d.Closed, d.Opened, d.Lag, d.Memory)
	}
}
