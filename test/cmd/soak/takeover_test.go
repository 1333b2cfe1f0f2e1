package main

import (
	"testing"
	"time"
)

// A difference the controller leaves open through the outage is due a
// takeover, dated from the audit time of the change behind it, and met by
// our first write after it: a create (no name) between the samples, or an
// update of a slice the sample names.
func TestJudgeTakeovers(t *testing.T) {
	out := window{From: at(100), To: at(140), Why: "kcm-kill"}
	in := takeoverInput{
		Outages: []window{out},
		Bound:   7 * time.Second,
		Diffs: []diffInterval{
			{Service: "ns/a", PrevPodsAt: at(101), OpenAt: at(102)},                     // open to the end: due
			{Service: "ns/b", PrevPodsAt: at(110), OpenAt: at(110.5), CloseAt: at(112)}, // reverted in 2 s: not due
			{Service: "ns/c", PrevPodsAt: at(120), OpenAt: at(121)},                     // due, written late
			{Service: "ns/d", PrevPodsAt: at(135), OpenAt: at(136)},                     // too close to the return: not due
			{Service: "ns/e", PrevPodsAt: at(50), OpenAt: at(51), CloseAt: at(52)},      // before the outage
			{Service: "ns/f", PrevPodsAt: at(103), OpenAt: at(104)},                     // due, never written
			{Service: "ns/a", PrevPodsAt: at(125), OpenAt: at(126)},                     // a again: once per outage
		},
		Changes: []change{
			{At: at(101.5), Services: []string{"ns/a", "ns/z"}},
			{At: at(110.2), Services: []string{"ns/b"}},
			{At: at(120.6), Services: []string{"ns/c"}},
			{At: at(135.5), Services: []string{"ns/d"}},
		},
		Ours: []oursChange{
			{Service: "ns/a", Before: at(107), At: at(107.25), Names: []string{"a-1"}},
			{Service: "ns/c", Before: at(128.75), At: at(129), Names: []string{"c-1"}},
		},
		Writes: []auditEvent{
			sliceWrite(userA, "create", "ns", "", 106.9),  // between the samples: a's
			sliceWrite(userA, "create", "ns", "", 107.1),  // the latest there: taken, conservatively
			sliceWrite(userA, "update", "ns", "c-1", 128), // c's slice by name (an earlier sample missed it)
		},
	}
	got := judgeTakeovers(in)
	if len(got) != 3 {
		t.Fatalf("takeovers: %+v", got)
	}
	a, c, f := got[0], got[2], got[1]
	if a.Service != "ns/a" || a.MissedAt != at(101.5) || a.FirstWrite != at(107.1) || a.Late(in.Bound) || a.Fault != "kcm-kill" {
		t.Errorf("a: %+v (delay %s)", a, a.Delay())
	}
	if f.Service != "ns/f" || f.MissedAt != at(103) || !f.FirstWrite.IsZero() || !f.Late(in.Bound) {
		t.Errorf("f (no change found: dated from the sample before): %+v", f)
	}
	if c.Service != "ns/c" || c.FirstWrite != at(128) || c.Delay() != 7400*time.Millisecond || !c.Late(in.Bound) {
		t.Errorf("c: %+v (delay %s)", c, c.Delay())
	}
}

// A takeover that was not due (the difference closed in time) but was
// written anyway is still reported, and not late.
func TestJudgeTakeoversNotDue(t *testing.T) {
	in := takeoverInput{
		Outages: []window{{From: at(0), To: at(60), Why: "kcm-freeze"}},
		Bound:   7 * time.Second,
		Diffs:   []diffInterval{{Service: "ns/a", PrevPodsAt: at(10), OpenAt: at(11), CloseAt: at(16)}},
		Changes: []change{{At: at(10.5), Services: []string{"ns/a"}}},
		Ours:    []oursChange{{Service: "ns/a", Before: at(15.5), At: at(15.75), Names: []string{"a-1"}}},
	}
	got := judgeTakeovers(in)
	if len(got) != 1 || got[0].Required || got[0].Late(in.Bound) || got[0].FirstWrite != at(15.75) {
		t.Fatalf("%+v", got)
	}
}
