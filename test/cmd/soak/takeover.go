package main

import (
	"sort"
	"strings"
	"time"
)

// change is one write of the churn that changed the desired endpoints of
// some Services, dated by the audit log (when the API server received it).
type change struct {
	At       time.Time
	Services []string
}

// takeover is one Service the controller failed during an outage, and our
// first write for it.
type takeover struct {
	Service, Fault string
	// MissedAt is when the first change the controller missed reached the
	// API server; FirstWrite when ours first wrote the Service after it
	// (zero: never, within the outage).
	MissedAt, FirstWrite time.Time
	// Required: the difference lasted past the deadline while the
	// controller was still failing, so a takeover was due; a takeover not
	// required (the difference closed in time) is still reported.
	Required bool
	// Served: ours already published the Service (an earlier outage's
	// takeover not handed back yet): the write is an update of ours, held
	// to the same bound, but no takeover.
	Served bool
}

// Delay is from the missed change to our first write.
func (t takeover) Delay() time.Duration {
	if t.FirstWrite.IsZero() {
		return 0
	}
	return t.FirstWrite.Sub(t.MissedAt)
}

// Late: due and not written within the bound.
func (t takeover) Late(bound time.Duration) bool {
	return t.Required && (t.FirstWrite.IsZero() || t.Delay() > bound)
}

// takeoverInput is what judgeTakeovers reads.
type takeoverInput struct {
	// Outages are the spans the controller was killed or frozen (Why: the
	// fault's name), to its restart or thaw.
	Outages []window
	Diffs   []diffInterval
	Changes []change
	Ours    []oursChange
	// Writes are our successful slice writes from the audit log.
	Writes []auditEvent
	// Bound is --takeover-after plus the margin the soak allows.
	Bound time.Duration
}

// judgeTakeovers finds, per outage and Service, the first difference the
// controller left open and our first write after the change behind it.
//
// The change is dated by the audit log: the first change to the Service
// between the sample before the difference and the first that showed it
// (when none is found, conservatively the earlier sample). Our first write
// is the audit log's: the first write of ours in the Service's namespace,
// at or after the change, to one of the slices the sample that showed it
// names; a create names no slice (the name is generated), so among our
// creates in that namespace between that sample and the one before, the
// latest is taken (conservative when several Services are taken over at
// once). Without any, the sample's time. A takeover is due when the
// difference was still open at MissedAt + Bound and the controller still
// down then.
func judgeTakeovers(in takeoverInput) []takeover {
	var out []takeover
	for _, o := range in.Outages {
		seen := map[string]bool{}
		for _, d := range in.Diffs {
			if seen[d.Service] || !d.OpenAt.Before(o.To) || (!d.CloseAt.IsZero() && !d.CloseAt.After(o.From)) || d.PrevPodsAt.IsZero() {
				continue
			}
			t := takeover{Service: d.Service, Fault: o.Why, MissedAt: missedAt(d, in.Changes), Served: d.Served}
			deadline := t.MissedAt.Add(in.Bound)
			t.Required = (d.CloseAt.IsZero() || !d.CloseAt.Before(deadline)) && !deadline.After(o.To)
			// A write after the difference closed answers a later one.
			until := o.To
			if !d.CloseAt.IsZero() && d.CloseAt.Before(until) {
				until = d.CloseAt
			}
			t.FirstWrite = firstWrite(d.Service, t.MissedAt, until, in.Ours, in.Writes)
			if !t.Required && t.FirstWrite.IsZero() {
				continue // closed in time by a revert or the controller's return
			}
			seen[d.Service] = true
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MissedAt.Before(out[j].MissedAt) })
	return out
}

func missedAt(d diffInterval, changes []change) time.Time {
	i := sort.Search(len(changes), func(i int) bool { return changes[i].At.After(d.PrevPodsAt) })
	for ; i < len(changes) && !changes[i].At.After(d.OpenAt); i++ {
		for _, s := range changes[i].Services {
			if s == d.Service {
				return changes[i].At
			}
		}
	}
	return d.PrevPodsAt
}

// firstWrite is our first write of svc at or after from, seen by a sample
// at or before until.
func firstWrite(svc string, from, until time.Time, ours []oursChange, writes []auditEvent) time.Time {
	ns, _, _ := strings.Cut(svc, "/")
	for _, c := range ours {
		if c.Service != svc || c.At.Before(from) {
			continue
		}
		if c.At.After(until) {
			return time.Time{}
		}
		names := map[string]bool{}
		for _, n := range c.Names {
			names[n] = true
		}
		var named, created time.Time
		for _, w := range writes {
			if w.Namespace != ns || w.Received.Before(from) || w.Time.After(c.At) {
				continue
			}
			switch {
			case w.Name != "" && names[w.Name] && named.IsZero():
				named = w.Received
			case w.Name == "" && w.Verb == "create" && w.Received.After(c.Before):
				created = w.Received
			}
		}
		switch {
		case !named.IsZero() && (created.IsZero() || named.Before(created)):
			return named
		case !created.IsZero():
			return created
		}
		return c.At
	}
	return time.Time{}
}
