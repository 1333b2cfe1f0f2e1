package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// offset renders t as the time since the soak's start, "+12m03.4s".
func offset(t, start time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := t.Sub(start)
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	m := d / time.Minute
	s := float64(d%time.Minute) / float64(time.Second)
	return fmt.Sprintf("%s%dm%04.1fs", sign, m, s)
}

// short is a ServiceAccount user's name alone.
func short(user string) string {
	if i := strings.LastIndexByte(user, ':'); i >= 0 {
		return user[i+1:]
	}
	return user
}

func describeWrite(w auditEvent, start time.Time) string {
	name := w.Name
	if name == "" {
		name = "(generated)"
	}
	return fmt.Sprintf("%s %s endpointslices %s/%s at %s (code %d)", short(w.User), w.Verb, w.Namespace, name, offset(w.Received, start), w.Code)
}

func formatMetric(m metric, v float64) string {
	if m == metricRSS {
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	}
	return fmt.Sprintf("%.0f", v)
}

// quantile is the q-quantile of ds by the nearest rank.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

// delays are the takeovers' delays (those written; not the updates of
// Services ours already served).
func (r results) delays() []time.Duration {
	var out []time.Duration
	for _, t := range r.Takeovers {
		if !t.FirstWrite.IsZero() && !t.Served {
			out = append(out, t.Delay())
		}
	}
	return out
}

// takeovers counts the takeovers proper, and the Services ours already
// served when the controller missed a change.
func (r results) takeovers() (takeovers, served int) {
	for _, t := range r.Takeovers {
		if t.Served {
			served++
		} else {
			takeovers++
		}
	}
	return
}

func (r results) late() int {
	n := 0
	for _, t := range r.Takeovers {
		if t.Late(r.in.Opts.TakeoverAfter + r.in.Opts.Margin) {
			n++
		}
	}
	return n
}

func (r results) restarts() int {
	n := 0
	for _, c := range r.Restarts {
		n += c
	}
	return n
}

// latest is each replica's last sample.
func latest(samples []resourceSample) map[string]resourceSample {
	out := map[string]resourceSample{}
	for _, s := range samples {
		if s.PID != 0 {
			out[s.Replica] = s
		}
	}
	return out
}

// firstAfter is each replica's first sample at or after t.
func firstAfter(samples []resourceSample, t time.Time) map[string]resourceSample {
	out := map[string]resourceSample{}
	for _, s := range samples {
		if _, ok := out[s.Replica]; !ok && s.PID != 0 && !s.At.Before(t) {
			out[s.Replica] = s
		}
	}
	return out
}

func formatSample(s resourceSample) string {
	if s.PID == 0 {
		return "not running"
	}
	return fmt.Sprintf("%.1f MiB (heap live %.1f MiB), %d goroutines, %d fds (pid %d)", float64(s.RSS)/(1<<20),
		float64(s.HeapLive)/(1<<20), s.Goroutines, s.FDs, s.PID)
}

// progressLine is the one line printed every minute.
func (r results) progressLine(now time.Time) string {
	in := r.in
	var b strings.Builder
	fmt.Fprintf(&b, "[%s / %s] churn %.1f/s (%d ok, %d failed)", now.Sub(in.Start).Round(time.Second), in.Opts.Duration, r.ChurnRate, r.ChurnOK, r.ChurnFailed)
	fmt.Fprintf(&b, " | faults %d", len(in.Faults))
	if n := len(in.Faults); n > 0 {
		fmt.Fprintf(&b, " (last %s)", in.Faults[n-1].Kind)
	}
	n, _ := r.takeovers()
	fmt.Fprintf(&b, " | writes while healthy %d | takeovers %d", len(r.HealthyWrites), n)
	if ds := r.delays(); len(ds) > 0 {
		fmt.Fprintf(&b, " (max %s, late %d)", quantile(ds, 1).Round(10*time.Millisecond), r.late())
	}
	fmt.Fprintf(&b, " | drops %d | lease/overlap violations %d/%d | restarts %d, crashes %d", len(r.Drops), len(r.LeaseViolations), len(r.Overlaps), r.restarts(), len(r.Crashes))
	last := latest(in.Resources)
	for _, name := range sortedKeys(last) {
		s := last[name]
		fmt.Fprintf(&b, " | %s %.0fMiB %dg %dfd", name, float64(s.RSS)/(1<<20), s.Goroutines, s.FDs)
	}
	return b.String()
}

// summary is the report printed at the end.
func (r results) summary() string {
	in := r.in
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	span := in.End.Sub(in.Start)
	p("soak summary: %s of churn and faults (%s to %s), seed %d", span.Round(time.Second), in.Start.Format(time.RFC3339), in.End.Format(time.RFC3339), in.Opts.Seed)
	p("  loop: sync --watch --standby --all -A --leader-elect, 2 replicas; --takeover-after %s, --handback-hold %s; lease %s/%s/%s (duration/renew/retry)",
		in.Opts.TakeoverAfter, in.Opts.HandbackHold, in.Opts.LeaseDuration, in.Opts.RenewDeadline, in.Opts.RetryPeriod)
	var kinds []string
	for _, k := range opKinds {
		if n := r.ChurnByKind[k]; n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
	}
	p("churn: %.2f events/s achieved of %.2f asked (%d ok, %d failed): %s", r.ChurnRate, in.Opts.Rate, r.ChurnOK, r.ChurnFailed, strings.Join(kinds, ", "))
	var fk []string
	for _, k := range rotation {
		if n := r.FaultsByKind[k]; n > 0 {
			fk = append(fk, fmt.Sprintf("%s %d", k, n))
		}
	}
	p("faults: %d, one every %s: %s", len(in.Faults), in.Opts.FaultEvery, strings.Join(fk, ", "))
	for _, f := range in.Faults {
		caught := ""
		if c, ok := r.CaughtUp[f.Start]; ok {
			caught = fmt.Sprintf(", the controller caught up %s", offset(c, in.Start))
		}
		p("  %s %-17s%s recovered %s%s%s%s", offset(f.Start, in.Start), f.Kind, target(f), offset(f.Recovered, in.Start), caught, prefix("; ", f.Detail), prefix("; ERROR: ", f.Err))
	}
	p("writes: %d endpointslice writes by the replicas, %d by kube-controller-manager", len(r.OurWrites), len(r.ControllerWrites))
	p("writes while kube-controller-manager was healthy: %d (excluded: a fault of the controller's until it caught up plus %s, a replica's fault %s after its start and its recovery)",
		len(r.HealthyWrites), in.Opts.Settle, in.Opts.Settle)
	if len(r.HealthyWrites) > 0 {
		deletes, svcs := 0, map[string]bool{}
		for _, w := range r.HealthyWrites {
			if w.Verb == "delete" {
				deletes++
			}
			svcs[r.SliceService[w.Namespace+"/"+w.Name]] = true
		}
		p("  %d deletes (hand-backs) and %d other writes, of %d Services", deletes, len(r.HealthyWrites)-deletes, len(svcs))
	}
	for i, w := range r.HealthyWrites {
		if i == 10 {
			p("  ... %d more (our-writes.csv)", len(r.HealthyWrites)-10)
			break
		}
		p("  %s%s", describeWrite(w, in.Start), prefix(", svc ", r.SliceService[w.Namespace+"/"+w.Name]))
	}
	ds := r.delays()
	n, served := r.takeovers()
	p("takeovers: %d Services the controller failed were taken over, delay from the first change it missed to our first write p50 %s, p99 %s, max %s",
		n, quantile(ds, 0.5).Round(time.Millisecond), quantile(ds, 0.99).Round(time.Millisecond), quantile(ds, 1).Round(time.Millisecond))
	p("  %d were due (the difference outlived --takeover-after + %s while the controller was still down); late or never written: %d; Services ours still served from an earlier outage, updated: %d",
		r.due(), in.Opts.Margin, r.late(), served)
	var took []time.Duration
	left := 0
	for _, h := range r.HandBacks {
		if h.Took == 0 {
			left++
		} else {
			took = append(took, h.Took)
		}
	}
	p("hand-backs: %d of the %d Services taken over were handed back, p50 %s, max %s after the controller's return (--handback-hold %s, settle %s); %d still ours at the end",
		len(took), len(r.HandBacks), quantile(took, 0.5).Round(100*time.Millisecond), quantile(took, 1).Round(100*time.Millisecond), in.Opts.HandbackHold, in.Opts.Settle, left)
	if in.Tracker != nil {
		p("drops of ready endpoints: %d (%d samples, every %s; %d failed while the API was down)", len(r.Drops), len(in.Tracker.Counts), in.Opts.SampleEvery, in.SamplerErrors)
	}
	p("leadership: %d terms, %d hand-overs (%d with overlapping writes); %d Lease writes by one replica while the other held it; %d slice writes outside the writer's term",
		len(r.Terms), len(r.Handovers), r.badHandovers(), len(r.LeaseViolations), len(r.Overlaps))
	if f := in.Final; f != nil {
		p("final: check -A exit %d, diff -A exit %d, %s after the churn stopped (bound %s)", f.CheckCode, f.DiffCode, f.Took.Round(100*time.Millisecond), in.Opts.FinalWithin)
	}
	start, end := firstAfter(in.Resources, in.Start.Add(span/4)), latest(in.Resources)
	for _, name := range sortedKeys(end) {
		p("replica %s: at %s %s; at the end %s; restarts after losing the Lease %d", name, offset(start[name].At, in.Start), formatSample(start[name]), formatSample(end[name]), r.Restarts[name])
	}
	judged, notJudged := 0, 0
	for _, f := range r.Flat {
		if f.Judged {
			judged++
		} else {
			notJudged++
		}
	}
	p("flat: trailing 1-minute medians over the last three quarters within %.0f%% of their value at the start (a process started later: after its warm-up): %d process metrics judged, %d not (too short-lived)",
		100*flatTolerance, judged, notJudged)
	for _, f := range r.Flat {
		if f.Judged && f.Metric == metricRSS || !f.OK(flatTolerance) {
			p("  replica %s pid %d %s: %s at %s, farthest %s (%+.1f%%)", f.Replica, f.PID, f.Metric, formatMetric(f.Metric, f.Start), offset(f.From, in.Start),
				formatMetric(f.Metric, f.Worst), 100*(f.Worst-f.Start)/math.Max(f.Start, 1))
		}
	}
	p("crashes: %d", len(r.Crashes))
	fails := r.Failures()
	if len(fails) == 0 {
		p("PASS: every check held")
	} else {
		p("FAIL: %d findings", len(fails))
		for i, f := range fails {
			if i == 30 {
				p("  ... %d more (see the CSV files)", len(fails)-30)
				break
			}
			p("  - %s", f)
		}
	}
	return b.String()
}

func (r results) due() int {
	n := 0
	for _, t := range r.Takeovers {
		if t.Required {
			n++
		}
	}
	return n
}

func (r results) badHandovers() int {
	n := 0
	for _, h := range r.Handovers {
		if !h.OK() {
			n++
		}
	}
	return n
}
