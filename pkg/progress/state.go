package progress

import (
	"fmt"
	"strings"
	"time"
)

// State is what a run has done so far; the zero value with Total and
// Start set is a run that has done nothing.
type State struct {
	Total int
	Start time.Time
	Done  int
	// Slowest is the Service that took longest so far, and how long.
	Slowest     string
	SlowestTook time.Duration
}

// Finish records one Service done after took.
func (s *State) Finish(key string, took time.Duration) {
	s.Done++
	s.Took(key, took)
}

// Took records how long one Service took, without counting it done (a run
// that counts otherwise, as the watch loop's first pass).
func (s *State) Took(key string, took time.Duration) {
	if took > s.SlowestTook || s.Slowest == "" {
		s.Slowest, s.SlowestTook = key, took
	}
}

// Line renders the state at now within width columns (0: no limit), e.g.
// "Services 1200/5000 (24%), 410/s, ~9s left; slowest shop/web 1.2s".
// The rate is over the whole run so far; until a second has passed there
// is none (a handful of Services says nothing of the rest).
func (s State) Line(now time.Time, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Services %d/%d", s.Done, s.Total)
	if s.Total > 0 {
		fmt.Fprintf(&b, " (%d%%)", s.Done*100/s.Total)
	}
	if el := now.Sub(s.Start); el >= time.Second && s.Done > 0 {
		rate := float64(s.Done) / el.Seconds()
		fmt.Fprintf(&b, ", %s/s", rateText(rate))
		if left := s.Total - s.Done; left > 0 {
			fmt.Fprintf(&b, ", ~%s left", roundDuration(time.Duration(float64(left)/rate*float64(time.Second))))
		}
	}
	if s.Slowest != "" {
		fmt.Fprintf(&b, "; slowest %s %s", s.Slowest, roundDuration(s.SlowestTook))
	}
	return truncate(b.String(), width)
}

func rateText(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

// roundDuration keeps two significant figures or so: 1.2s, 45ms, 3m10s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

// truncate cuts s to width columns (runes), marking the cut with "…", so
// that the line never wraps: a wrapped line is not redrawn in place.
func truncate(s string, width int) string {
	r := []rune(s)
	if width <= 0 || len(r) <= width {
		return s
	}
	if width == 1 {
		return "…"
	}
	return string(r[:width-1]) + "…"
}
