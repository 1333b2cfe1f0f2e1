package main

import (
	"time"
)

// faultKind is one kind of fault the soak injects.
type faultKind string

const (
	faultKCMKill          faultKind = "kcm-kill"          // SIGKILL, started again after the outage
	faultKCMFreeze        faultKind = "kcm-freeze"        // SIGSTOP, SIGCONT after the outage
	faultAPIServerRestart faultKind = "apiserver-restart" // killed, started again after a pause
	faultEtcdRestart      faultKind = "etcd-restart"      // SIGKILL, started again after a pause
	faultLeaderBlackhole  faultKind = "leader-blackhole"  // the leader's proxy drops everything until the other replica leads
	faultConnReset        faultKind = "conn-reset"        // the leader's connections reset
	faultDelay            faultKind = "delay"             // 300 ms each way on the leader's proxy, for a minute
	faultWatchCut         faultKind = "watch-cut"         // the leader cut off across an etcd compaction
)

// rotation is the order faults come in: each kind of the controller
// manager's is followed by one of a replica's, so that every fault of the
// controller meets a replica that has lived through another.
var rotation = []faultKind{faultKCMKill, faultLeaderBlackhole, faultKCMFreeze, faultConnReset,
	faultAPIServerRestart, faultDelay, faultEtcdRestart, faultWatchCut}

// Fault timings that are not flags.
const (
	pauseDown     = 5 * time.Second        // kube-apiserver and etcd stay down this long
	delayFor      = time.Minute            // the delay fault's length
	delayBy       = 300 * time.Millisecond // and its delay
	watchCutFor   = 6 * time.Second        // the watch cut: under --leader-elect-renew-deadline
	compactAfter  = 2 * time.Second        // into the cut, etcd is compacted
	restartBudget = 90 * time.Second       // a control-plane process's start-up, at most
	faultGap      = 10 * time.Second       // between one fault's recovery and the next
)

// controllerDown: while the fault lasts, kube-controller-manager does not
// publish (killed or frozen; its API server or etcd down).
func (k faultKind) controllerDown() bool {
	switch k {
	case faultKCMKill, faultKCMFreeze, faultAPIServerRestart, faultEtcdRestart:
		return true
	}
	return false
}

// controllerFailing: the fault is the controller's own (killed or
// frozen) while the API server serves the loop: takeovers are due.
func (k faultKind) controllerFailing() bool { return k == faultKCMKill || k == faultKCMFreeze }

// expected is how long a fault of the kind usually takes, to its
// recovery: what the schedule plans with.
func (k faultKind) expected(o options) time.Duration {
	switch k {
	case faultKCMKill, faultKCMFreeze:
		return o.Outage + 2*time.Second
	case faultAPIServerRestart:
		return pauseDown + 15*time.Second
	case faultEtcdRestart:
		return pauseDown + 10*time.Second
	case faultLeaderBlackhole:
		return o.LeaseDuration + 5*time.Second
	case faultDelay:
		return delayFor
	case faultWatchCut:
		return watchCutFor
	}
	return time.Second
}

// longest is how long a fault of the kind may take, to its recovery: its
// bound.
func (k faultKind) longest(o options) time.Duration {
	switch k {
	case faultKCMKill, faultKCMFreeze:
		return o.Outage + 10*time.Second
	case faultAPIServerRestart, faultEtcdRestart:
		return pauseDown + restartBudget
	case faultLeaderBlackhole:
		return o.LeaseDuration + o.RetryPeriod*3 + 30*time.Second
	case faultDelay:
		return delayFor + time.Second
	case faultWatchCut:
		return watchCutFor + 30*time.Second
	}
	return 5 * time.Second
}

// faultRecord is one fault as injected.
type faultRecord struct {
	Kind   faultKind
	Target string // the replica, for a proxy's fault
	// Start is when it was injected, Recovered when it ended (the process
	// running again, the proxy passing).
	Start, Recovered time.Time
	Detail           string
	Err              string
}

// nextFault says when the i-th fault (from 0) may start and its kind: one
// every FaultEvery from the start, never sooner than faultGap after the
// previous one's recovery, and only if it can be expected to recover and
// settle before the end.
func nextFault(o options, start, end, prevRecovered time.Time, i int) (faultKind, time.Time, bool) {
	kinds := o.Faults
	if len(kinds) == 0 {
		return "", time.Time{}, false
	}
	k := kinds[i%len(kinds)]
	at := start.Add(time.Duration(i+1) * o.FaultEvery)
	if !prevRecovered.IsZero() && at.Before(prevRecovered.Add(faultGap)) {
		at = prevRecovered.Add(faultGap)
	}
	if at.Add(k.expected(o)).Add(o.Settle).After(end) {
		return k, at, false
	}
	return k, at, true
}

// excludedWindows are the spans writes of ours are not judged in: a fault
// that takes the controller down, from its start until the controller
// caught up after its recovery (caughtUp, by fault; its recovery when
// absent) plus settle; any other, settle after its start and after its
// recovery.
func excludedWindows(faults []faultRecord, caughtUp map[time.Time]time.Time, settle time.Duration) []window {
	var out []window
	for _, f := range faults {
		rec := f.Recovered
		if rec.IsZero() {
			rec = f.Start
		}
		if f.Kind.controllerDown() {
			if c, ok := caughtUp[f.Start]; ok && c.After(rec) {
				rec = c
			}
			out = append(out, window{From: f.Start, To: rec.Add(settle), Why: string(f.Kind)})
			continue
		}
		out = append(out, window{From: f.Start, To: f.Start.Add(settle), Why: string(f.Kind)},
			window{From: rec, To: rec.Add(settle), Why: string(f.Kind) + " recovered"})
	}
	return out
}

// caughtUp is, for each fault that took the controller down, the first
// sample after its recovery from which every difference between the
// desired endpoints and the controller's slices open then or opening
// within bound was closed within bound of its opening: the controller
// keeps up again (a difference it is blind to right after its return
// counts, young as it is then). Its process may run
// again well before: after kube-apiserver's restart,
// kube-controller-manager's informers wait out their backoff before they
// list again (30 s and more), blind meanwhile.
func caughtUp(faults []faultRecord, diffs []diffInterval, counts []sampleCount, bound time.Duration) map[time.Time]time.Time {
	out := map[time.Time]time.Time{}
	for _, f := range faults {
		if !f.Kind.controllerDown() || f.Recovered.IsZero() {
			continue
		}
		for _, c := range counts {
			if c.At.Before(f.Recovered) {
				continue
			}
			late := false
			for _, d := range diffs {
				open := !d.OpenAt.After(c.At.Add(bound)) && (d.CloseAt.IsZero() || d.CloseAt.After(c.At))
				if open && (d.CloseAt.IsZero() || d.CloseAt.Sub(d.OpenAt) > bound) {
					late = true
					break
				}
			}
			if !late {
				out[f.Start] = c.At
				break
			}
		}
	}
	return out
}

// outages are the spans the controller was killed or frozen.
func outages(faults []faultRecord) []window {
	var out []window
	for _, f := range faults {
		if f.Kind.controllerFailing() && !f.Recovered.IsZero() {
			out = append(out, window{From: f.Start, To: f.Recovered, Why: string(f.Kind)})
		}
	}
	return out
}
