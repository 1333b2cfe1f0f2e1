package main

import (
	"testing"
	"time"
)

// Faults come every FaultEvery, in rotation, never sooner than faultGap
// after the previous one's recovery, and none that cannot be expected to
// recover and settle before the end.
func TestNextFault(t *testing.T) {
	o := defaultOptions()
	start, end := at(0), at(20*60)
	k, when, ok := nextFault(o, start, end, time.Time{}, 0)
	if !ok || k != faultKCMKill || when != at(180) {
		t.Fatalf("first: %s at %s (%v)", k, when.Sub(start), ok)
	}
	k, when, ok = nextFault(o, start, end, at(500), 1)
	if !ok || k != faultLeaderBlackhole || when != at(510) {
		t.Fatalf("second, after a long first: %s at %s (%v)", k, when.Sub(start), ok)
	}
	if _, when, ok = nextFault(o, start, end, time.Time{}, 6); ok {
		t.Fatalf("an etcd restart at %s cannot settle before 20m", when.Sub(start))
	}
	if k, _, ok = nextFault(o, start, end, time.Time{}, 4); !ok || k != faultAPIServerRestart {
		t.Fatalf("an API server restart at 15m settles before 20m: %s %v", k, ok)
	}
	o.Faults = []faultKind{faultConnReset}
	if k, _, ok = nextFault(o, start, end, time.Time{}, 3); !ok || k != faultConnReset {
		t.Fatalf("restricted rotation: %s %v", k, ok)
	}
}

// The controller's own faults exclude their whole span and the settle
// after; a replica's fault only the settle after its start and its end.
func TestExcludedWindows(t *testing.T) {
	faults := []faultRecord{
		{Kind: faultKCMKill, Start: at(100), Recovered: at(130)},
		{Kind: faultDelay, Start: at(300), Recovered: at(360)},
		{Kind: faultKCMFreeze, Start: at(500)}, // never recovered: excluded from its start
	}
	ws := excludedWindows(faults, map[time.Time]time.Time{at(100): at(145)}, time.Minute)
	if len(ws) != 4 || ws[0].To != at(205) || ws[1].To != at(360) || ws[2].From != at(360) || ws[2].To != at(420) || ws[3].To != at(560) {
		t.Fatalf("%+v", ws)
	}
	if !inAny(ws, at(362)) || !inAny(ws, at(359)) || inAny(ws, at(250)) {
		t.Errorf("membership")
	}
	if o := outages(faults); len(o) != 1 || o[0].From != at(100) || o[0].To != at(130) {
		t.Errorf("outages: %+v", o)
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions([]string{"-duration", "5m", "-fault-every", "30s", "-faults", "kcm-kill,delay", "-outage", "15s"})
	if err != nil || o.Duration != 5*time.Minute || len(o.Faults) != 2 || o.Faults[1] != faultDelay {
		t.Fatalf("%+v %v", o, err)
	}
	for _, bad := range [][]string{
		{"-duration", "1m"}, {"-rate", "0"}, {"-faults", "nope"}, {"-outage", "5s"},
		{"-lease-duration", "5s"}, {"extra"},
	} {
		if _, err := parseOptions(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

// The controller has caught up at the first sample after its recovery at
// which every difference open was closed within the bound: one it is blind
// to right after its return counts, young as it is.
func TestCaughtUp(t *testing.T) {
	faults := []faultRecord{{Kind: faultAPIServerRestart, Start: at(100), Recovered: at(110)}, {Kind: faultDelay, Start: at(200), Recovered: at(260)},
		{Kind: faultEtcdRestart, Start: at(300), Recovered: at(310)}}
	diffs := []diffInterval{
		{Service: "ns/a", OpenAt: at(101), CloseAt: at(140)}, // the controller blind after the restart
		{Service: "ns/b", OpenAt: at(139), CloseAt: at(139.5)},
		{Service: "ns/c", OpenAt: at(112), CloseAt: at(150)}, // changed after the return, and missed
		{Service: "ns/d", OpenAt: at(310.5), CloseAt: at(340)},
		{Service: "ns/e", OpenAt: at(341), CloseAt: at(341.2)}, // kept up with
	}
	var counts []sampleCount
	for s := 100.0; s < 400; s += 0.25 {
		counts = append(counts, sampleCount{At: at(s)})
	}
	got := caughtUp(faults, diffs, counts, 5*time.Second)
	if len(got) != 2 || got[at(100)] != at(150) || got[at(300)] != at(340) {
		t.Fatalf("%v", got)
	}
}
