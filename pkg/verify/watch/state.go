package watch

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// Kind is what a target is: a node (its service proxy) or a DNS replica.
type Kind string

const (
	Node    Kind = "node"
	Replica Kind = "dns"
)

// Event reasons, on the Node (or the DNS Pod).
const (
	ReasonDrift     = "DataPlaneDrift"
	ReasonRecovered = "DataPlaneRecovered"
)

// Entry is one target's status after a round.
type Entry struct {
	Kind Kind
	// Name is the node's, or "namespace/name" of the DNS Pod.
	Name   string
	Status verdict.Status
	// Reason says why UNKNOWN or PENDING, or names the first finding of a
	// DRIFT; Class is UNKNOWN's reason class (Class).
	Reason, Class  string
	Missing, Extra int
	// Execs and Bytes are what reading the node's rules cost this round.
	Execs int
	Bytes int64
	// Read: the round read the target (a tier answered or was tried, a
	// replica was asked), not only found why it could not.
	Read bool
	// UID is the DNS Pod's (an Event names it).
	UID string
	// Since is when the target took its status (the round that first
	// found it).
	Since time.Time
}

// Event is a Kubernetes Event a change of status is worth.
type Event struct {
	Kind    Kind
	Name    string
	UID     string // the DNS Pod's
	Warning bool   // Warning, else Normal
	Reason  string
	Message string
}

// State is what the rounds so far found: each target's entry, and which
// targets were told DRIFT (an Event) and have not yet recovered.
type State struct {
	// MinGap is the least time between two DataPlaneDrift Events of one
	// target: a node flapping between OK and DRIFT is told once a gap.
	MinGap  time.Duration
	entries map[key]Entry
	warned  map[key]time.Time // the last DataPlaneDrift told, while its episode lasts
	told    map[key]time.Time // the last DataPlaneDrift told, kept across episodes
}

type key struct {
	kind Kind
	name string
}

// Apply takes a round's report, read at now, and returns every target's
// entry (nodes then replicas, each in name order; targets the round did
// not see are gone) and the Events its changes are worth. changed are the
// Services ("namespace/name") that changed while the round read: a node
// read after its proxy applied such a change disagrees with the slices
// the round planned from, so what it finds about them is PENDING, not
// DRIFT (the schedule reads them again a sync period later).
func (s *State) Apply(rep verdict.Report, now time.Time, changed map[string]bool) ([]Entry, []Event) {
	if s.entries == nil {
		s.entries, s.warned, s.told = map[key]Entry{}, map[key]time.Time{}, map[key]time.Time{}
	}
	cur := entriesOf(rep, changed)
	next := make(map[key]Entry, len(cur))
	var events []Event
	for i, e := range cur {
		k := key{e.Kind, e.Name}
		prev, seen := s.entries[k]
		e.Since = now
		if seen && prev.Status == e.Status {
			e.Since = prev.Since
		}
		cur[i] = e
		next[k] = e
		switch {
		case e.Status == verdict.Drift && s.warned[k].IsZero() && now.Sub(s.told[k]) >= s.MinGap:
			events = append(events, Event{Kind: e.Kind, Name: e.Name, UID: e.UID, Warning: true, Reason: ReasonDrift,
				Message: fmt.Sprintf("%s %s drifts from the EndpointSlices: %s", e.Kind.word(), e.Name, e.Reason)})
			s.warned[k], s.told[k] = now, now
		case recovered(e) && !s.warned[k].IsZero():
			events = append(events, Event{Kind: e.Kind, Name: e.Name, UID: e.UID, Reason: ReasonRecovered,
				Message: fmt.Sprintf("%s %s serves what the EndpointSlices say again, %s after it was found drifting",
					e.Kind.word(), e.Name, now.Sub(s.warned[k]).Round(time.Second))})
			delete(s.warned, k)
		}
	}
	for k := range s.entries {
		if _, ok := next[k]; !ok {
			delete(s.warned, k)
			delete(s.told, k)
		}
	}
	s.entries = next
	return cur, events
}

// recovered: the target no longer drifts, as far as the round can tell:
// OK, or, its rules not read for want of a right, its proxy no longer
// saying it is stale (the least-privilege verifier's only view).
func recovered(e Entry) bool {
	return e.Status == verdict.OK || (e.Status == verdict.Unknown && e.Class == ClassForbidden)
}

func (k Kind) word() string {
	if k == Replica {
		return "DNS replica"
	}
	return "node"
}

// entriesOf reads a report's targets, statuses and reasons.
func entriesOf(rep verdict.Report, changed map[string]bool) []Entry {
	out := make([]Entry, 0, len(rep.Nodes)+len(rep.DNS))
	for _, n := range rep.Nodes {
		e := Entry{Kind: Node, Name: n.Node, Status: n.Status, Reason: n.Reason, Missing: len(n.Missing), Extra: len(n.Extra),
			Execs: n.Execs, Bytes: n.BytesRead, Read: len(n.Tiers) > 0}
		if e.Status == verdict.Drift && onlyChanged(n, changed) {
			e.Status, e.Reason = verdict.Pending, "what it disagrees on changed while the round read it: read again a sync period later"
		}
		if e.Status == verdict.Drift {
			e.Reason = firstFinding(n)
		}
		if e.Status == verdict.Unknown {
			e.Class = Class(n)
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	dns := make([]Entry, 0, len(rep.DNS))
	for _, d := range rep.DNS {
		e := Entry{Kind: Replica, Name: d.Replica, Status: verdict.Status(d.Status), Reason: d.Reason,
			Missing: len(d.Missing), Extra: len(d.Extra), Read: len(d.Answers) > 0, UID: d.UID}
		if e.Status == verdict.Drift && len(changed) > 0 {
			// A replica's records are not told apart by Service here: any
			// change during the round may be what it answered ahead of.
			e.Status, e.Reason = verdict.Pending, "a Service changed while the round read it: read again a sync period later"
		}
		switch {
		case e.Status == verdict.Drift && len(d.Missing) > 0:
			e.Reason = "record " + d.Missing[0].String() + " missing" + more(len(d.Missing)+len(d.Extra)-1)
		case e.Status == verdict.Drift && len(d.Extra) > 0:
			e.Reason = "record " + d.Extra[0].String() + " served, not in the slices" + more(len(d.Extra)-1)
		case e.Status == verdict.Unknown:
			e.Class = replicaClass(d.Reason)
		}
		e.Reason = english.Clip(e.Reason, english.ClipLen)
		dns = append(dns, e)
	}
	slices.SortFunc(dns, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return append(out, dns...)
}

// onlyChanged: every finding that is not pending concerns a Service in
// changed (and there is one).
func onlyChanged(n verdict.NodeRow, changed map[string]bool) bool {
	found := false
	for _, fs := range [][]verdict.Finding{n.Missing, n.Extra} {
		for _, f := range fs {
			if f.Pending {
				continue
			}
			if !changed[f.Service] {
				return false
			}
			found = true
		}
	}
	return found
}

// firstFinding words a DRIFT node's first finding, missing before extra:
// the Service and the endpoint an operator looks for.
func firstFinding(n verdict.NodeRow) string {
	var f verdict.Finding
	state := "missing"
	switch {
	case len(n.Missing) > 0:
		f = n.Missing[0]
	case len(n.Extra) > 0:
		f, state = n.Extra[0], "programmed, not in the slices"
	default:
		return n.Reason
	}
	what := f.What
	switch {
	case f.Endpoint != "":
		what += " " + f.Endpoint
	case f.Chain != "":
		what += " " + f.Chain
	}
	port := ""
	if f.Port != "" {
		port = " port " + f.Port
	}
	return english.Clip(fmt.Sprintf("Service %s%s: %s %s%s", f.Service, port, what, state, more(len(n.Missing)+len(n.Extra)-1)),
		english.ClipLen)
}

func more(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more)", n)
}
