package main

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// resourceSample is one look at a replica's process.
type resourceSample struct {
	At         time.Time
	Replica    string
	PID        int
	RSS        int64 // bytes
	RSSAnon    int64 // bytes of RSS that are anonymous memory (heap, stacks)
	RSSFile    int64 // bytes of RSS that are file pages (the binary)
	Goroutines int   // -1: /metrics did not answer
	HeapLive   int64 // bytes the last GC found live; -1: /metrics did not answer (reported, not judged)
	FDs        int   // -1: /proc did not answer
	Leader     bool  // its replica held the Lease then (from the audit log)
}

// metric names a column of resourceSample.
type metric string

const (
	metricRSS        metric = "rss"
	metricGoroutines metric = "goroutines"
	metricFDs        metric = "fds"
)

var metrics = []metric{metricRSS, metricGoroutines, metricFDs}

func (s resourceSample) value(m metric) (float64, bool) {
	switch m {
	case metricRSS:
		return float64(s.RSS), s.RSS > 0
	case metricGoroutines:
		return float64(s.Goroutines), s.Goroutines > 0
	default:
		return float64(s.FDs), s.FDs > 0
	}
}

// flatConfig is how flatness is judged.
type flatConfig struct {
	// Window is judged: the run's last three quarters of the run that
	// started at Start.
	Start, From, To time.Time
	// Smooth is the width of the trailing median each value is taken as
	// (GC and a burst of churn move a single sample, not a minute's
	// median).
	Smooth time.Duration
	// Tolerance is the largest relative distance from the window's start.
	Tolerance float64
	// Warmup is how long a process started after the run's start is
	// given before it is judged, against its own value then; MinSpan is
	// how long it must then live to be judged at all.
	Warmup, MinSpan time.Duration
}

// flatResult is one replica's metric over one process's life in the
// window.
type flatResult struct {
	Replica      string
	PID          int
	Metric       metric
	From, To     time.Time
	Start, Worst float64 // smoothed values: at the start, and farthest from it
	WorstAt      time.Time
	Judged       bool   // long enough to judge
	Note         string // why not judged
}

// Deviation is Worst's relative distance from Start.
func (r flatResult) Deviation() float64 {
	if r.Start == 0 {
		return 0
	}
	return math.Abs(r.Worst-r.Start) / r.Start
}

// OK: not judged, or within the tolerance.
func (r flatResult) OK(tol float64) bool { return !r.Judged || r.Deviation() <= tol }

// judgeFlat judges each replica's process (by PID) over the part of the
// window it lived. A process started with the run is judged from the
// window's start; one started later from its own start plus Warmup (or
// the window's start, if later), and only if it then lived MinSpan more.
// The start value is the trailing median at that point; each later
// trailing median is compared with it. Leading or not, a process is judged
// over its whole life: a standby fills the same caches as the leader.
func judgeFlat(samples []resourceSample, cfg flatConfig) []flatResult {
	type proc struct {
		replica string
		pid     int
	}
	byProc := map[proc][]resourceSample{}
	var order []proc
	for _, s := range samples {
		if s.PID == 0 {
			continue
		}
		p := proc{s.Replica, s.PID}
		if _, ok := byProc[p]; !ok {
			order = append(order, p)
		}
		byProc[p] = append(byProc[p], s)
	}
	var out []flatResult
	for _, p := range order {
		ss := byProc[p]
		born, died := ss[0].At, ss[len(ss)-1].At
		if !died.After(cfg.From) || born.After(cfg.To) {
			continue // lived outside the window
		}
		from := cfg.From
		if born.After(cfg.Start.Add(cfg.Smooth)) {
			from = maxTime(cfg.From, born.Add(cfg.Warmup))
		}
		for _, m := range metrics {
			r := flatResult{Replica: p.replica, PID: p.pid, Metric: m, From: from, To: died}
			if died.Sub(from) < cfg.MinSpan {
				r.Note = fmt.Sprintf("judged from %s, lived %s more, under %s", from.Sub(cfg.Start).Round(time.Second),
					maxDuration(0, died.Sub(from)).Round(time.Second), cfg.MinSpan)
				out = append(out, r)
				continue
			}
			first := true
			for i, s := range ss {
				if s.At.Before(from) || s.At.After(cfg.To) {
					continue
				}
				v, ok := trailingMedian(ss[:i+1], m, cfg.Smooth)
				if !ok {
					continue
				}
				if first {
					r.Start, r.Worst, r.WorstAt, first = v, v, s.At, false
					r.Judged = true
					continue
				}
				if math.Abs(v-r.Start) > math.Abs(r.Worst-r.Start) {
					r.Worst, r.WorstAt = v, s.At
				}
			}
			if !r.Judged {
				r.Note = "no samples"
			}
			out = append(out, r)
		}
	}
	return out
}

// trailingMedian is the median of m over the samples within width before
// the last one (the last included).
func trailingMedian(ss []resourceSample, m metric, width time.Duration) (float64, bool) {
	end := ss[len(ss)-1].At
	var vs []float64
	for i := len(ss) - 1; i >= 0 && !ss[i].At.Before(end.Add(-width)); i-- {
		if v, ok := ss[i].value(m); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	sort.Float64s(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

func maxDuration(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
