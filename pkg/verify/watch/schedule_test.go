package watch

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func TestScheduleRounds(t *testing.T) {
	s := Schedule{Interval: 300 * time.Second, Settle: 30 * time.Second}
	if !s.Next().IsZero() {
		t.Fatalf("first round not at once: %v", s.Next())
	}
	s.Started(at(0))
	if got := s.Next(); !got.Equal(at(300)) {
		t.Fatalf("quiet: next %v, want the interval (300 s)", got.Sub(t0))
	}
	// A change is read a sync period after it, so a node that has it queued
	// is not judged yet.
	s.Changed(at(100))
	s.Changed(at(110))
	if got := s.Next(); !got.Equal(at(130)) {
		t.Fatalf("after a change at 100 s: next %v, want 130 s", got.Sub(t0))
	}
	s.Started(at(130))
	// The change at 110 s was 20 s old at 130 s: one more round covers it,
	// a sync period after the last, never closer.
	if got := s.Next(); !got.Equal(at(160)) {
		t.Fatalf("after a round that left the 110 s change uncovered: next %v, want 160 s", got.Sub(t0))
	}
	s.Started(at(160))
	if got := s.Next(); !got.Equal(at(460)) {
		t.Fatalf("every change covered: next %v, want the interval (460 s)", got.Sub(t0))
	}
	// Constant churn: rounds every sync period, not every change.
	last, rounds := at(160), 0
	for sec := 470; sec < 600; sec++ {
		s.Changed(at(sec))
		if n := s.Next(); n.Sub(last) < 30*time.Second {
			t.Fatalf("change at %d s: next %v, under a sync period after the last round", sec, n.Sub(t0))
		}
		if !s.Next().After(at(sec)) {
			s.Started(at(sec))
			last, rounds = at(sec), rounds+1
		}
	}
	if rounds != 5 { // 470 (the interval's, due at 460), 500, 530, 560, 590
		t.Fatalf("%d rounds in 130 s of churn, want 5", rounds)
	}
}
