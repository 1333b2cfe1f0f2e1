package main

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// tracker follows the API's snapshots one after another and keeps what
// the checks need of them: ready endpoints dropped, when each Service's
// controller slices differed from the desired ones, and when ours changed.
// It is pure: the sampler feeds it.
type tracker struct {
	prev    *snapshot
	Drops   []drop
	Diffs   []diffInterval
	open    map[string]int // Service -> index in Diffs of its open interval
	Changes []oursChange
	Counts  []sampleCount
}

// drop is a ready endpoint that vanished from every slice of its Service
// while its Pod stayed ready, selected and unchanged.
type drop struct {
	Service, Addr, Pod string
	// Had is when the slices last showed it (a list's start), Missed when
	// they first did not.
	Had, Missed time.Time
}

// diffInterval is a time the controller's slices of a Service did not
// publish the desired endpoints, as the samples saw it.
type diffInterval struct {
	Service string
	// PrevPodsAt is when the sample before the first that showed it listed
	// its Pods (zero for the first sample): what the Pods were then is in
	// that sample, so the change that opened the difference came later.
	// OpenAt is when the first sample showing it listed its Pods.
	PrevPodsAt, OpenAt time.Time
	// CloseAt is the first sample (slices list) showing it current again,
	// or without the Service; zero while open.
	CloseAt time.Time
	// Served: slices of ours published the Service when it opened (a
	// takeover of an earlier outage not handed back yet).
	Served bool
}

// oursChange is a sample in which our slices of a Service differed from
// the sample before (created, updated or deleted).
type oursChange struct {
	Service string
	// Before is the previous sample's slices list, At this one's.
	Before, At time.Time
	Names      []string
	Gone       bool // no slice of ours left
}

// sampleCount is one sample's totals, for the time series.
type sampleCount struct {
	At                              time.Time
	Services, Served, Behind, Ready int
}

func newTracker() *tracker { return &tracker{open: map[string]int{}} }

// copy is what the tracker holds now, for a reader that must not hold up
// the sampler.
func (t *tracker) copy() *tracker {
	return &tracker{Drops: append([]drop(nil), t.Drops...), Diffs: append([]diffInterval(nil), t.Diffs...),
		Changes: append([]oursChange(nil), t.Changes...), Counts: append([]sampleCount(nil), t.Counts...)}
}

// Observe takes the next snapshot.
func (t *tracker) Observe(s snapshot) {
	c := sampleCount{At: s.SlicesAt, Services: len(s.Services)}
	for _, key := range sortedKeys(s.Services) {
		v := s.Services[key]
		if v.Ours != noSlices {
			c.Served++
		}
		c.Ready += len(v.Ready)
		behind := v.Desired != v.Controller && !v.Terminating
		if behind {
			c.Behind++
		}
		i, isOpen := t.open[key]
		switch {
		case behind && !isOpen:
			d := diffInterval{Service: key, OpenAt: s.PodsAt}
			if t.prev != nil {
				d.PrevPodsAt = t.prev.PodsAt
				if pv, ok := t.prev.Services[key]; ok && pv.Ours != noSlices {
					d.Served = true
				}
			}
			t.open[key] = len(t.Diffs)
			t.Diffs = append(t.Diffs, d)
		case !behind && isOpen:
			t.Diffs[i].CloseAt = s.SlicesAt
			delete(t.open, key)
		}
		if t.prev != nil {
			pv, had := t.prev.Services[key]
			prevOurs, prevNames := noSlices, []string(nil)
			if had {
				prevOurs, prevNames = pv.Ours, pv.OursNames
			}
			if v.Ours != prevOurs || !slices.Equal(v.OursNames, prevNames) {
				t.Changes = append(t.Changes, oursChange{Service: key, Before: t.prev.SlicesAt, At: s.SlicesAt,
					Names: v.OursNames, Gone: v.Ours == noSlices})
			}
			if had {
				t.drops(key, pv, v, t.prev, &s)
			}
		}
	}
	for key, i := range t.open {
		if _, ok := s.Services[key]; !ok {
			t.Diffs[i].CloseAt = s.SlicesAt
			delete(t.open, key)
		}
	}
	t.Counts = append(t.Counts, c)
	t.prev = &s
}

// drops compares a Service's ready endpoints with the sample before. The
// slices are listed before the Pods, so a Pod that turned not ready (or
// left the selector) before the slices dropped it is seen so in the same
// sample's Pods; a Pod whose resourceVersion did not move between the two
// samples' Pod lists was ready, selected and unchanged the whole time, the
// slices list included: its endpoint vanishing is a drop, whoever caused
// it. A Service whose own resourceVersion moved (a selector switch) is not
// judged in that sample.
func (t *tracker) drops(key string, before, now serviceView, prev, cur *snapshot) {
	if before.RV != now.RV || now.Terminating {
		return
	}
	ns, _, _ := strings.Cut(key, "/")
	for _, addr := range sortedKeys(before.Ready) {
		if now.Ready[addr] {
			continue
		}
		p, ok := cur.Pods[addr]
		q, had := prev.Pods[addr]
		if !ok || !had || p.NS != ns || p.Name != q.Name || p.RV != q.RV || !p.Ready || !selects(now.Selector, p.Labels) {
			continue
		}
		t.Drops = append(t.Drops, drop{Service: key, Addr: addr, Pod: p.NS + "/" + p.Name, Had: prev.SlicesAt, Missed: cur.SlicesAt})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
