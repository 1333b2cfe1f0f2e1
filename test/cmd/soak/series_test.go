package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
)

// syntheticResults is a small run: two replicas, a fault, a takeover.
func syntheticResults() results {
	in := inputs{Opts: defaultOptions(), IDs: testIDs, Start: at(0), End: at(300), Stop: at(310),
		Faults:  []faultRecord{{Kind: faultKCMKill, Start: at(100), Recovered: at(130)}, {Kind: faultConnReset, Target: "b", Start: at(200), Recovered: at(200)}},
		Tracker: newTracker(), Exits: map[string][]replicaExit{"a": {{At: at(150), PID: 1, Code: 4, Lost: true}}}}
	for s := 0.0; s <= 310; s += 10 {
		in.Resources = append(in.Resources, resourceSample{At: at(s), Replica: "a", PID: 1 + int(s)/150, RSS: 40 << 20, Goroutines: 80, FDs: 11},
			resourceSample{At: at(s), Replica: "b", PID: 9, RSS: 41 << 20, Goroutines: 85, FDs: 12})
	}
	in.Audit = []auditEvent{leaseWrite(userA, 1), leaseWrite(userB, 170), sliceWrite(userA, "create", "ns", "", 106)}
	r := analyze(in)
	r.Takeovers = []takeover{{Service: "ns/a", Fault: "kcm-kill", MissedAt: at(101), FirstWrite: at(106), Required: true}}
	return r
}

// The CSV files have their header and a row per sample, and the plot is a
// PNG, from a run with a fault, a restart and a takeover.
func TestOutputs(t *testing.T) {
	r := syntheticResults()
	dir := t.TempDir()
	if err := r.writeCSVs(dir); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "resources.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 1+len(r.in.Resources) || rows[0][4] != "rss_bytes" || rows[0][9] != "leader" || rows[3][9] != "true" || rows[4][9] != "false" {
		t.Fatalf("resources.csv: %v %v", rows[:2], err)
	}
	if b := r.bins(); len(b) != 32 || b[10].Ours != 1 || b[10].Takeovers != 1 {
		t.Fatalf("bins: %d, %+v", len(b), b[10])
	}
	png := filepath.Join(dir, "soak.png")
	if err := r.plotPNG(png); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("not a PNG: %v", err)
	}
	if s := r.summary(); !bytes.Contains([]byte(s), []byte("faults: 2")) {
		t.Errorf("summary:\n%s", s)
	}
}
