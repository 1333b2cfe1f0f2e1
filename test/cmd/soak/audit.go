package main

import (
	"sort"
	"time"
)

// identities are the users the audit log names: the replicas', the
// controller manager's and the churn's (admin).
type identities struct {
	Ours       []string
	Controller string
	Admin      string
}

func (ids identities) ours(user string) bool {
	for _, u := range ids.Ours {
		if u == user {
			return true
		}
	}
	return false
}

// isWrite: the verbs that change an object.
func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

func succeeded(code int) bool { return code >= 200 && code < 300 }

// sliceWrites are the successful EndpointSlice writes of the users keep
// accepts, in the order received.
func sliceWrites(evs []auditEvent, keep func(user string) bool) []auditEvent {
	var out []auditEvent
	for _, e := range evs {
		if e.Resource == "endpointslices" && isWrite(e.Verb) && succeeded(e.Code) && keep(e.User) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out
}

// window is a span of time, [From, To).
type window struct {
	From, To time.Time
	Why      string
}

func (w window) has(t time.Time) bool { return !t.Before(w.From) && t.Before(w.To) }

func inAny(ws []window, t time.Time) bool {
	for _, w := range ws {
		if w.has(t) {
			return true
		}
	}
	return false
}

// writesWhileHealthy are the writes received inside [from, to) and outside
// every excluded window.
func writesWhileHealthy(writes []auditEvent, excluded []window, from, to time.Time) []auditEvent {
	var out []auditEvent
	for _, w := range writes {
		if (window{From: from, To: to}).has(w.Received) && !inAny(excluded, w.Received) {
			out = append(out, w)
		}
	}
	return out
}

// term is one identity's hold of the Lease: from the first successful
// write of the Lease by it after another's (or the first), to the next
// term's start (zero: to the end).
type term struct {
	User       string
	Start, End time.Time
	Renewals   int
}

// leaseViolation is a successful write of the Lease by one identity less
// than the lease duration after another's last: it wrote the Lease while
// the other held it. A candidate that plays by the rules waits the lease
// duration from when it saw the holder's last renewal, which it saw after
// the API server received it, so its own write is received later still.
type leaseViolation struct {
	At, HolderLast time.Time
	User, Holder   string
	Verb           string
}

// leaseTerms reads the leadership terms and the violations from the
// successful writes of the Lease ns/name by the replicas, received before
// until (the soak's own stop, when the leader releases the Lease).
func leaseTerms(evs []auditEvent, ids identities, ns, name string, leaseDuration time.Duration, until time.Time) ([]term, []leaseViolation) {
	var lease []auditEvent
	for _, e := range evs {
		if e.Resource == "leases" && e.Namespace == ns && e.Name == name && isWrite(e.Verb) && succeeded(e.Code) &&
			ids.ours(e.User) && e.Received.Before(until) {
			lease = append(lease, e)
		}
	}
	sort.SliceStable(lease, func(i, j int) bool { return lease[i].Received.Before(lease[j].Received) })
	var terms []term
	var bad []leaseViolation
	var last auditEvent
	for i, e := range lease {
		if i > 0 && e.User != last.User {
			if e.Received.Sub(last.Received) < leaseDuration {
				bad = append(bad, leaseViolation{At: e.Received, HolderLast: last.Received, User: e.User, Holder: last.User, Verb: e.Verb})
			}
			terms[len(terms)-1].End = e.Received
		}
		if i == 0 || e.User != last.User {
			terms = append(terms, term{User: e.User, Start: e.Received})
		} else {
			terms[len(terms)-1].Renewals++
		}
		last = e
	}
	return terms, bad
}

// holderAt is the term holding the Lease at t, or nil before the first.
func holderAt(terms []term, t time.Time) *term {
	i := sort.Search(len(terms), func(i int) bool { return terms[i].Start.After(t) })
	if i == 0 {
		return nil
	}
	return &terms[i-1]
}

// overlap is a write of slices by an identity that did not hold the Lease
// when the API server received it.
type overlap struct {
	Write  auditEvent
	Holder string // "" before any term
}

// overlaps are the replicas' slice writes received outside their own terms.
func overlaps(writes []auditEvent, terms []term) []overlap {
	var out []overlap
	for _, w := range writes {
		h := holderAt(terms, w.Received)
		switch {
		case h == nil:
			out = append(out, overlap{Write: w})
		case h.User != w.User:
			out = append(out, overlap{Write: w, Holder: h.User})
		}
	}
	return out
}

// handover is one change of leader and the writes on either side of it.
type handover struct {
	From, To string
	At       time.Time
	// LastFrom is the previous leader's last slice write before it leads
	// again (zero: none in its term or after); FirstTo the new leader's
	// first in its term (zero: none).
	LastFrom, FirstTo time.Time
}

// OK: the old leader's last write came before the new leader's first.
func (h handover) OK() bool {
	return h.LastFrom.IsZero() || h.FirstTo.IsZero() || h.LastFrom.Before(h.FirstTo)
}

// handovers pairs each term with the one before it.
func handovers(writes []auditEvent, terms []term) []handover {
	var out []handover
	for i := 1; i < len(terms); i++ {
		prev, cur := terms[i-1], terms[i]
		h := handover{From: prev.User, To: cur.User, At: cur.Start}
		// The old leader's writes up to its next term, wherever they fall.
		var next time.Time
		for j := i + 1; j < len(terms); j++ {
			if terms[j].User == prev.User {
				next = terms[j].Start
				break
			}
		}
		for _, w := range writes {
			switch {
			case w.User == prev.User && !w.Received.Before(prev.Start) && (next.IsZero() || w.Received.Before(next)):
				h.LastFrom = w.Received
			case w.User == cur.User && h.FirstTo.IsZero() && !w.Received.Before(cur.Start) && (cur.End.IsZero() || w.Received.Before(cur.End)):
				h.FirstTo = w.Received
			}
		}
		out = append(out, h)
	}
	return out
}
