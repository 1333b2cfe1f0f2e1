package watch

import "time"

// Schedule decides when rounds run: one every Interval, and one Settle
// after a change of the slices or Services (kube-proxy's sync period: a
// node reading sooner would be judged while it may still have the change
// queued, and the round would say PENDING, not OK or DRIFT). Rounds are
// never closer than Settle, so under constant churn a node is read at most
// once a sync period. The zero Schedule runs its first round at once.
type Schedule struct {
	Interval, Settle time.Duration
	// last is when the last round started; changed when the earliest
	// change not yet covered by a round was seen (zero: none), newest the
	// latest. A round covers a change when it starts Settle after it.
	last, changed, newest time.Time
}

// Changed notes a change seen at at.
func (s *Schedule) Changed(at time.Time) {
	if s.changed.IsZero() || at.Before(s.changed) {
		s.changed = at
	}
	if at.After(s.newest) {
		s.newest = at
	}
}

// Next is when the next round is due.
func (s *Schedule) Next() time.Time {
	if s.last.IsZero() {
		return time.Time{}
	}
	next := s.last.Add(s.Interval)
	if !s.changed.IsZero() {
		next = earliest(next, latest(s.changed.Add(s.Settle), s.last.Add(s.Settle)))
	}
	return next
}

// Started records that a round started reading at at. It covers every
// change seen Settle or more before; should a later one remain, the next
// round is due Settle after the newest (which one of the changes in
// between are uncovered is not kept: the newest is the latest they need).
func (s *Schedule) Started(at time.Time) {
	s.last = at
	if s.newest.IsZero() || !s.newest.Add(s.Settle).After(at) {
		s.changed, s.newest = time.Time{}, time.Time{}
		return
	}
	s.changed = s.newest
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
