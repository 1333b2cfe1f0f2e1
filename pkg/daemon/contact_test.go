package daemon

import (
	"strings"
	"testing"
	"time"
)

// The probes fail once the API server has answered nothing for longer
// than their bound, and say nothing when no transport is watched.
func TestBlindProbes(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	heard, ok := time.Unix(1000, 0), true
	c := contact{heard: func() (time.Time, bool) { return heard, ok }, now: clk.now}
	ready, live := c.blind(BlindReady), c.blind(BlindLive)
	clk.t = heard.Add(BlindReady)
	if err := ready(nil); err != nil {
		t.Fatalf("ready at the bound: %v", err)
	}
	clk.t = heard.Add(BlindReady + time.Second)
	if err := ready(nil); err == nil || !strings.Contains(err.Error(), "no answer from the API server for 16s") {
		t.Fatalf("ready past the bound: %v", err)
	}
	if err := live(nil); err != nil {
		t.Fatalf("alive at 16s: %v", err)
	}
	clk.t = heard.Add(BlindLive + time.Second)
	if err := live(nil); err == nil {
		t.Fatal("alive after 61s blind")
	}
	ok = false
	if err := live(nil); err != nil {
		t.Fatalf("no watched transport: %v", err)
	}
}
