package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// inputs is everything the checks read: what the soak did (churn, faults,
// the replicas' processes) and what the API server recorded and showed
// (the audit log, the samples). Nothing the loop says of itself.
type inputs struct {
	Opts options
	IDs  identities
	// Start is when churn and faults began, End when they stopped, Stop
	// when the replicas were told to stop (the end of what is judged).
	Start, End, Stop time.Time
	Churn            []churnRecord
	Faults           []faultRecord
	Audit            []auditEvent
	Tracker          *tracker
	SamplerErrors    int
	Resources        []resourceSample
	Exits            map[string][]replicaExit
	Final            *finalResult // nil while running
}

// results are the checks' findings.
type results struct {
	in inputs

	ChurnOK, ChurnFailed int
	ChurnByKind          map[opKind]int
	ChurnRate            float64
	Undated              int // changes not found in the audit log (dated by the churn's clock)

	FaultsByKind map[faultKind]int

	OurWrites, ControllerWrites []auditEvent
	// CaughtUp is, by the start of each fault that took the controller
	// down, when it kept up again (caughtUp).
	CaughtUp        map[time.Time]time.Time
	Excluded        []window
	HealthyWrites   []auditEvent
	Takeovers       []takeover
	Drops           []drop
	Terms           []term
	LeaseViolations []leaseViolation
	Overlaps        []overlap
	Handovers       []handover
	// HandBacks: per Service taken over, from the controller's recovery
	// to the deletion of ours (zero: still ours at the end).
	HandBacks []handBack
	// SliceService names the Service of each slice of ours the samples saw.
	SliceService map[string]string

	Flat     []flatResult
	Restarts map[string]int // exits 4 (the Lease lost)
	Crashes  []string
}

// handBack is how long ours lasted after the controller's return.
type handBack struct {
	Service, Fault string
	Recovered      time.Time
	Took           time.Duration // 0: still ours at the end
}

// analyze runs every check over the inputs.
func analyze(in inputs) results {
	r := results{in: in, ChurnByKind: map[opKind]int{}, FaultsByKind: map[faultKind]int{}, Restarts: map[string]int{}}
	for _, c := range in.Churn {
		switch {
		case c.Sent.Before(in.Start) && !c.Sent.IsZero():
			// Filling the world before the soak began.
		case c.Err == "":
			r.ChurnOK++
			r.ChurnByKind[c.Kind]++
		default:
			r.ChurnFailed++
		}
	}
	if d := in.End.Sub(in.Start).Seconds(); d > 0 {
		r.ChurnRate = float64(r.ChurnOK) / d
	}
	for _, f := range in.Faults {
		r.FaultsByKind[f.Kind]++
	}
	r.OurWrites = sliceWrites(in.Audit, in.IDs.ours)
	r.ControllerWrites = sliceWrites(in.Audit, func(u string) bool { return u == in.IDs.Controller })
	if in.Tracker != nil {
		r.CaughtUp = caughtUp(in.Faults, in.Tracker.Diffs, in.Tracker.Counts, in.Opts.TakeoverAfter)
	}
	r.Excluded = excludedWindows(in.Faults, r.CaughtUp, in.Opts.Settle)
	r.HealthyWrites = writesWhileHealthy(r.OurWrites, r.Excluded, in.Start, in.Stop)

	changes, undated := datedChanges(in.Churn, in.Audit, in.IDs.Admin)
	r.Undated = undated
	if in.Tracker != nil {
		r.Takeovers = judgeTakeovers(takeoverInput{Outages: outages(in.Faults), Diffs: in.Tracker.Diffs, Changes: changes,
			Ours: in.Tracker.Changes, Writes: r.OurWrites, Bound: in.Opts.TakeoverAfter + in.Opts.Margin})
		r.Drops = in.Tracker.Drops
		r.HandBacks = handBacks(r.Takeovers, outages(in.Faults), in.Tracker.Changes)
		r.SliceService = map[string]string{}
		for _, c := range in.Tracker.Changes {
			ns, _, _ := strings.Cut(c.Service, "/")
			for _, n := range c.Names {
				r.SliceService[ns+"/"+n] = c.Service
			}
		}
	}
	r.Terms, r.LeaseViolations = leaseTerms(in.Audit, in.IDs, leaseNamespace, leaseName, in.Opts.LeaseDuration, in.Stop)
	r.Overlaps = overlaps(writesBefore(r.OurWrites, in.Stop), r.Terms)
	r.Handovers = handovers(writesBefore(r.OurWrites, in.Stop), r.Terms)

	span := in.End.Sub(in.Start)
	r.Flat = judgeFlat(in.Resources, flatConfig{Start: in.Start, From: in.Start.Add(span / 4), To: in.End, Smooth: time.Minute,
		Tolerance: flatTolerance, Warmup: restartWarmup, MinSpan: 3 * time.Minute})
	for _, name := range sortedKeys(in.Exits) {
		for _, e := range in.Exits[name] {
			switch {
			case e.Lost:
				r.Restarts[name]++
			case e.Crash():
				r.Crashes = append(r.Crashes, fmt.Sprintf("replica %s (pid %d) exited %d at %s", name, e.PID, e.Code, e.At.Format(time.TimeOnly)))
			case e.Code != 0 && e.Code != 143:
				r.Crashes = append(r.Crashes, fmt.Sprintf("replica %s (pid %d) exited %d on SIGTERM at the end", name, e.PID, e.Code))
			}
		}
	}
	return r
}

// withLeaders is a copy of samples, each marked whether its replica held
// the Lease then by the audit log's terms.
func (r results) withLeaders(samples []resourceSample) []resourceSample {
	out := make([]resourceSample, len(samples))
	for i, s := range samples {
		h := holderAt(r.Terms, s.At)
		s.Leader = h != nil && h.User == r.userOf(s.Replica)
		out[i] = s
	}
	return out
}

// restartWarmup is how long a process started after the run's start is
// given before it is judged: its binary's pages and its heap grow for the
// first minutes of churn and faults (the 2-hour run's restarted replicas:
// about 37 MiB at start, 41 MiB at 10 minutes), as the run's first
// processes do in its first quarter.
const restartWarmup = 10 * time.Minute

// flatTolerance is how far a smoothed resource may move from its value at
// the start of the judged window.
const flatTolerance = 0.10

func writesBefore(ws []auditEvent, t time.Time) []auditEvent {
	var out []auditEvent
	for _, w := range ws {
		if w.Received.Before(t) {
			out = append(out, w)
		}
	}
	return out
}

// datedChanges dates each change that affected a Service by the audit
// log: the admin's write of its object received between the churn sending
// it and the answer. One not found is dated by when the churn sent it.
func datedChanges(recs []churnRecord, evs []auditEvent, admin string) ([]change, int) {
	type key struct{ resource, verb, ns, name string }
	index := map[key][]time.Time{}
	for _, e := range evs {
		if e.User == admin {
			k := key{e.Resource, e.Verb, e.Namespace, e.Name}
			index[k] = append(index[k], e.Received)
		}
	}
	var out []change
	undated := 0
	for _, c := range recs {
		if c.Err != "" || len(c.Affected) == 0 {
			continue
		}
		ns := c.NS
		if c.Resource == "namespaces" {
			ns = ""
		}
		at := time.Time{}
		for _, t := range index[key{c.Resource, c.Verb, ns, c.Name}] {
			if !t.Before(c.Sent) && !t.After(c.Done) {
				at = t
				break
			}
		}
		if at.IsZero() {
			at = c.Sent
			undated++
		}
		out = append(out, change{At: at, Services: c.Affected})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, undated
}

// handBacks measures, per Service taken over, the time from the
// controller's recovery to the first sample without slices of ours.
func handBacks(takeovers []takeover, outs []window, ours []oursChange) []handBack {
	var out []handBack
	for _, t := range takeovers {
		if t.Served || t.FirstWrite.IsZero() {
			continue
		}
		var rec time.Time
		for _, o := range outs {
			if o.has(t.MissedAt) || o.has(t.FirstWrite) {
				rec = o.To
			}
		}
		if rec.IsZero() {
			continue
		}
		h := handBack{Service: t.Service, Fault: t.Fault, Recovered: rec}
		for _, c := range ours {
			if c.Service == t.Service && c.Gone && !c.At.Before(rec) {
				h.Took = c.At.Sub(rec)
				break
			}
		}
		out = append(out, h)
	}
	return out
}

// Failures lists every failed check, one line each; none: the soak passed.
func (r results) Failures() []string {
	var out []string
	if n := len(r.HealthyWrites); n > 0 {
		out = append(out, fmt.Sprintf("%d endpointslice writes by the replicas while kube-controller-manager was healthy (first: %s)", n, describeWrite(r.HealthyWrites[0], r.in.Start)))
	}
	bound := r.in.Opts.TakeoverAfter + r.in.Opts.Margin
	for _, t := range r.Takeovers {
		if t.Late(bound) {
			what := "taken over"
			if t.Served {
				what = "updated (ours already served it)"
			}
			if t.FirstWrite.IsZero() {
				out = append(out, fmt.Sprintf("svc %s (%s): not %s before the controller returned; the change it missed came at %s", t.Service, t.Fault, what, offset(t.MissedAt, r.in.Start)))
			} else {
				out = append(out, fmt.Sprintf("svc %s (%s): %s %s after the change it missed (at %s), over %s", t.Service, t.Fault, what, t.Delay().Round(time.Millisecond), offset(t.MissedAt, r.in.Start), bound))
			}
		}
	}
	for _, d := range r.Drops {
		out = append(out, fmt.Sprintf("svc %s: ready endpoint %s (pod %s) dropped at %s while the Pod stayed ready", d.Service, d.Addr, d.Pod, offset(d.Missed, r.in.Start)))
	}
	for _, v := range r.LeaseViolations {
		out = append(out, fmt.Sprintf("%s %sd the Lease at %s, %s after %s's renewal (lease duration %s)", short(v.User), v.Verb, offset(v.At, r.in.Start),
			v.At.Sub(v.HolderLast).Round(time.Millisecond), short(v.Holder), r.in.Opts.LeaseDuration))
	}
	for _, o := range r.Overlaps {
		holder := "no one"
		if o.Holder != "" {
			holder = short(o.Holder)
		}
		out = append(out, fmt.Sprintf("%s wrote while %s held the Lease: %s", short(o.Write.User), holder, describeWrite(o.Write, r.in.Start)))
	}
	for _, h := range r.Handovers {
		if !h.OK() {
			out = append(out, fmt.Sprintf("hand-over %s -> %s at %s: the old leader's last write (%s) came after the new one's first (%s)",
				short(h.From), short(h.To), offset(h.At, r.in.Start), offset(h.LastFrom, r.in.Start), offset(h.FirstTo, r.in.Start)))
		}
	}
	if f := r.in.Final; f != nil && !f.OK {
		out = append(out, fmt.Sprintf("after the last fault, check -A (exit %d) and diff --all -A (exit %d) were not both clean within %s%s", f.CheckCode, f.DiffCode,
			r.in.Opts.FinalWithin, prefix(": ", f.firstLines())))
	}
	for _, fl := range r.Flat {
		if !fl.OK(flatTolerance) {
			out = append(out, fmt.Sprintf("replica %s (pid %d): %s moved %.0f%% (%s at %s to %s at %s), over %.0f%%", fl.Replica, fl.PID, fl.Metric,
				100*fl.Deviation(), formatMetric(fl.Metric, fl.Start), offset(fl.From, r.in.Start), formatMetric(fl.Metric, fl.Worst), offset(fl.WorstAt, r.in.Start), 100*flatTolerance))
		}
	}
	out = append(out, r.Crashes...)
	for _, f := range r.in.Faults {
		if f.Err != "" {
			out = append(out, fmt.Sprintf("fault %s at %s: %s", f.Kind, offset(f.Start, r.in.Start), f.Err))
		}
	}
	return out
}
