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
	cfg := flatConfig{Start: at(0), From: at(300), To: at(1200), Smooth: time.Minute, Tolerance: 0.10, Warmup: 2 * time.Minute, MinSpan: 3 * time.Minute}
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

// A process started after the run's start gets its full warm-up even when
// it started just before the window (the window's start is no shorter
// warm-up); a replica started again keeps being judged by process, each
// against its own start, leading or not.
func TestJudgeFlatWarmup(t *testing.T) {
	cfg := flatConfig{Start: at(0), From: at(600), To: at(2400), Smooth: time.Minute, Tolerance: 0.10, Warmup: 10 * time.Minute, MinSpan: 3 * time.Minute}
	// e: restarted at 480 s, 2 minutes before the window; its heap grows
	// 20 % over its first 10 minutes, then holds.
	ramp := func(born float64) func(float64) int64 {
		return func(s float64) int64 {
			if d := s - born; d < 600 {
				return int64(40<<20) + int64(d)*(8<<20)/600
			}
			return 48 << 20
		}
	}
	early := series("e", 7, 480, 2400, 10, ramp(480))
	// f: the first process of f leads until 1000 s; f started again at
	// 1010 s as a standby, then grows 20 % after its warm-up.
	first := series("f", 8, 0, 1000, 10, func(float64) int64 { return 45 << 20 })
	for i := range first {
		first[i].Leader = true
	}
	again := series("f", 9, 1010, 2400, 10, func(s float64) int64 {
		if s < 1610 {
			return 40 << 20
		}
		return int64(40<<20) + int64(s-1610)*(10<<10)
	})
	var all []resourceSample
	for _, ss := range [][]resourceSample{early, first, again} {
		all = append(all, ss...)
	}
	verdict := map[int]flatResult{}
	for _, r := range judgeFlat(all, cfg) {
		if r.Metric == metricRSS {
			verdict[r.PID] = r
		}
	}
	if r := verdict[7]; !r.Judged || !r.OK(cfg.Tolerance) || r.From != at(1080) || r.Start < 47<<20 {
		t.Errorf("e, started just before the window: %+v", r)
	}
	if r := verdict[8]; !r.Judged || !r.OK(cfg.Tolerance) || r.From != at(600) {
		t.Errorf("f's first process: %+v", r)
	}
	if r := verdict[9]; !r.Judged || r.OK(cfg.Tolerance) || r.From != at(1610) {
		t.Errorf("f started again, growing after its warm-up: %+v (deviation %.2f)", r, r.Deviation())
	}
}
