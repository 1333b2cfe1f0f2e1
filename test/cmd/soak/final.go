package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// finalResult is the last look: check -A and diff -A after the churn and
// the faults stopped.
type finalResult struct {
	CheckCode, DiffCode int
	CheckOut, DiffOut   string
	Took                time.Duration
	OK                  bool
}

// final runs `kubectl slices check -A` and `kubectl slices diff --all -A`
// (diff wants --all beside -A) as the admin until both exit 0, at most
// within: check finds nothing to report
// (every Service published as desired, no slice of ours astray) and diff
// finds nothing sync would change.
func (s *soak) final(ctx context.Context, within time.Duration) finalResult {
	start := time.Now()
	var f finalResult
	for {
		var err error
		f.CheckOut, f.CheckCode, err = s.kubectl(ctx, 30*time.Second, "slices", "check", "-A")
		if err != nil {
			f.CheckOut += "\n" + err.Error()
		}
		f.DiffOut, f.DiffCode, err = s.kubectl(ctx, 30*time.Second, "slices", "diff", "--all", "-A")
		if err != nil {
			f.DiffOut += "\n" + err.Error()
		}
		f.Took = time.Since(start)
		if f.CheckCode == 0 && f.DiffCode == 0 {
			f.OK = f.Took <= within
			return f
		}
		if f.Took > within || !sleep(ctx, time.Second) {
			return f
		}
	}
}

// firstLines says in brief what the last look found: check's first
// finding, and how many slices diff would create, update or delete, with
// the first one's name.
func (f finalResult) firstLines() string {
	var parts []string
	if f.CheckCode != 0 {
		for _, l := range strings.Split(f.CheckOut, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				parts = append(parts, "check: "+l)
				break
			}
		}
	}
	if f.DiffCode != 0 {
		created, other, first := 0, 0, ""
		for _, l := range strings.Split(f.DiffOut, "\n") {
			if name, ok := strings.CutPrefix(l, "+++ "); ok {
				if strings.Contains(name, "<new-") {
					created++
				} else {
					other++
				}
				if first == "" {
					first = name
				}
			}
		}
		parts = append(parts, fmt.Sprintf("diff would create %d slices and change or delete %d (first %s)", created, other, first))
	}
	return strings.Join(parts, "; ")
}
