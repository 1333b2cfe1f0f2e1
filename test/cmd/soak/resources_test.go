package main

import (
	"testing"
	"time"
)

func series(replica string, pid int, from, to float64, every float64, rss func(s float64) int64) []resourceSample {
	var out []resourceSample
	for s := from; s <= to; s += every {
		out = append(out, resourceSample{At: at(s), Replica: replica, PID: pid, RSS: rss(s), Goroutines: 100, FDs: 20})
	}
	return out
}

// A flat process passes; one whose smoothed RSS grows past the tolerance
// fails, a single spike does not (the median smooths it); a process started
// again in the window is judged against its own start after warm-up, or
// not at all when it lived too short.
func TestJudgeFlat(t *testing.T) {
	cfg := flatConfig{From: at(300), To: at(1200), Smooth: time.Minute, Tolerance: 0.10, Warmup: 2 * time.Minute, MinSpan: 3 * time.Minute}
	flat := series("a", 1, 0, 1200, 10, func(s float64) int64 {
		if s == 700 {
			return 500 << 20 // one spike
		}
		return 40 << 20
	})
	growing := series("b", 2, 0, 1200, 10, func(s float64) int64 { return int64(40<<20) + int64(s)*(10<<10) })
	restarted := append(series("c", 3, 0, 600, 10, func(float64) int64 { return 40 << 20 }),
		series("c", 4, 610, 1200, 10, func(s float64) int64 { return 30 << 20 })...)
	short := series("d", 5, 1000, 1200, 10, func(float64) int64 { return 30 << 20 })
	var all []resourceSample
	for _, s := range [][]resourceSample{flat, growing, restarted, short} {
		all = append(all, s...)
	}
	res := judgeFlat(all, cfg)
	verdict := map[string]flatResult{}
	for _, r := range res {
		if r.Metric == metricRSS {
			verdict[r.Replica+"/"+string(rune('0'+r.PID))] = r
		}
	}
	if r := verdict["a/1"]; !r.Judged || !r.OK(cfg.Tolerance) {
		t.Errorf("flat with a spike: %+v", r)
	}
	if r := verdict["b/2"]; !r.Judged || r.OK(cfg.Tolerance) || r.WorstAt != at(1200) {
		t.Errorf("growing: %+v (deviation %.2f)", r, r.Deviation())
	}
	if r := verdict["c/3"]; !r.Judged || !r.OK(cfg.Tolerance) || r.From != at(300) {
		t.Errorf("the first process of c: %+v", r)
	}
	if r := verdict["c/4"]; !r.Judged || !r.OK(cfg.Tolerance) || r.From != at(730) || r.Start != 30<<20 {
		t.Errorf("c started again: %+v", r)
	}
	if r := verdict["d/5"]; r.Judged || r.Note == "" {
		t.Errorf("short-lived: %+v", r)
	}
}

// A standby that takes the Lease is judged again from its first minutes as
// a leader: the step up to the leader's caches is not growth, but growth
// as a leader still is. A replica's processes are told apart by PID.
func TestJudgeFlatByRole(t *testing.T) {
	cfg := flatConfig{From: at(300), To: at(2400), Smooth: time.Minute, Tolerance: 0.10, Warmup: 2 * time.Minute, MinSpan: 3 * time.Minute}
	leadFrom := func(ss []resourceSample, s float64) []resourceSample {
		for i := range ss {
			ss[i].Leader = !ss[i].At.Before(at(s))
		}
		return ss
	}
	// e: standby at 39 MiB, then leads from 1000 s at 45 MiB, flat.
	stepUp := leadFrom(series("e", 7, 0, 2400, 10, func(s float64) int64 {
		if s < 1000 {
			return 39 << 20
		}
		return 45 << 20
	}), 1000)
	// f: the same step, then grows 20 % as a leader.
	growsLeading := leadFrom(series("f", 8, 0, 2400, 10, func(s float64) int64 {
		if s < 1000 {
			return 39 << 20
		}
		return int64(45<<20) + int64(s-1000)*(7<<10)
	}), 1000)
	// g: another replica's standby with e's PID, which must not inherit
	// e's leadership.
	other := series("g", 7, 0, 2400, 10, func(float64) int64 { return 40 << 20 })
	var all []resourceSample
	for _, ss := range [][]resourceSample{stepUp, growsLeading, other} {
		all = append(all, ss...)
	}
	input := append([]resourceSample(nil), all...)
	verdict := map[string]flatResult{}
	for _, r := range judgeFlat(all, cfg) {
		if r.Metric == metricRSS {
			verdict[r.Replica+"/"+string(r.Role)] = r
		}
	}
	if r := verdict["e/standby"]; !r.Judged || !r.OK(cfg.Tolerance) || r.Start != 39<<20 || r.To != at(990) {
		t.Errorf("e as a standby: %+v", r)
	}
	if r := verdict["e/leader"]; !r.Judged || !r.OK(cfg.Tolerance) || r.From != at(1120) || r.Start != 45<<20 {
		t.Errorf("e as a leader: %+v", r)
	}
	if r := verdict["f/leader"]; !r.Judged || r.OK(cfg.Tolerance) {
		t.Errorf("f grew as a leader: %+v (deviation %.2f)", r, r.Deviation())
	}
	if r, ok := verdict["g/leader"]; ok {
		t.Errorf("g never led: %+v", r)
	}
	if r := verdict["g/standby"]; !r.Judged || !r.OK(cfg.Tolerance) || r.To != at(2400) {
		t.Errorf("g as a standby: %+v", r)
	}
	for i := range all {
		if all[i] != input[i] {
			t.Fatalf("judgeFlat changed its input at %d", i)
		}
	}
}
