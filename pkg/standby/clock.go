package standby

import (
	"fmt"
	"slices"
	"strings"
	"time"

	discovery "k8s.io/api/discovery/v1"
)

// The takeover clock. A difference between the controller's slices and the
// desired ones is dated from when the loop observed the change behind it,
// by its own clock: never from a Pod's Ready transition or creation, which
// a relabel, a selector switch or a label patch re-adding a Pod leaves
// months old although the change is new (and which would make a takeover
// instant). The clock restarts while the controller shows it is at work:
//
//   - it wrote this Service's slices: upstream's controller syncs a
//     Service from its cache and writes what it finds, so under churn its
//     slices trail the latest change yet move; one that is dead, or whose
//     writes are refused, leaves them as they are;
//   - it closed a difference (of any Service) the loop had observed no
//     later than this one: its queue is first in, first out, and one
//     change selected by 200 Services is 200 syncs it writes at its client's
//     rate (20 per second by default), so the last waits behind the others.
//     Only differences opened no later count, so the delay is bounded by
//     the backlog the controller had when this one opened.

// opened dates a difference the loop has just found: from when the loop
// observed the change this sync reflects, or now. On the loop's first look
// at a Service, what it observed before (a replica standing by for the
// lease keeps its observations unsynced for hours) says nothing of this
// difference: it is dated now, or, for a Service the controller has
// published no slice for, from the Service's creation: the controller has
// had since then (a loop started beside a controller that has long failed
// takes over at once).
func opened(fresh, published bool, in Input) time.Time {
	at := in.Observed
	switch {
	case fresh && !published:
		at = in.Created
	case fresh:
		at = time.Time{}
	}
	if at.IsZero() || at.After(in.Now) {
		return in.Now
	}
	return at
}

// restarted is the open difference's clock start after this sync: now if
// the controller's slices of the Service changed since last seen, the
// controller's progress on older differences if later.
func restarted(m Memory, theirs string, in Input) time.Time {
	since := m.Since
	if theirs != m.Theirs {
		since = in.Now
	}
	if in.Progress.After(since) && !in.Progress.After(in.Now) {
		since = in.Progress
	}
	return since
}

// fingerprint identifies the controller's slices as written: the API
// server bumps a slice's generation on every change of its endpoints,
// ports or labels, not on metadata others write (owner references).
func fingerprint(live []*discovery.EndpointSlice) string {
	ids := make([]string, 0, len(live))
	for _, s := range live {
		ids = append(ids, fmt.Sprintf("%s/%s/%d", s.UID, s.Name, s.Generation))
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// Closure is a difference the controller closed: when the loop observed
// it open, and when closed.
type Closure struct {
	Opened, Closed time.Time
}

// Closures are the controller's recent closures, in the order recorded.
// Not safe for concurrent use.
type Closures struct {
	list []Closure
}

// Add records a closure and forgets those closed more than keep before
// it (the takeover threshold: an older one restarts no clock that has not
// run out already).
func (c *Closures) Add(cl Closure, keep time.Duration) {
	cut := cl.Closed.Add(-keep)
	kept := c.list[:0]
	for _, o := range c.list {
		if !o.Closed.Before(cut) {
			kept = append(kept, o)
		}
	}
	c.list = append(kept, cl)
}

// Latest is the last time the controller closed a difference opened no
// later than opened; zero when none, or when opened is zero.
func (c *Closures) Latest(opened time.Time) time.Time {
	var at time.Time
	if opened.IsZero() {
		return at
	}
	for _, o := range c.list {
		if !o.Opened.After(opened) && o.Closed.After(at) {
			at = o.Closed
		}
	}
	return at
}

// Len is how many closures are kept.
func (c *Closures) Len() int { return len(c.list) }
