package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestLine(t *testing.T) {
	s := State{Total: 5000, Start: t0}
	if got, want := s.Line(t0, 0), "Services 0/5000 (0%)"; got != want {
		t.Errorf("nothing done:\n got %q\nwant %q", got, want)
	}
	for i := range 1200 {
		took := 10 * time.Millisecond
		key := "shop/fast"
		if i == 700 {
			took, key = 1234*time.Millisecond, "shop/web"
		}
		s.Finish(key, took)
	}
	// 1,200 in 3 s: 400/s, 3,800 left: 9.5 s.
	if got, want := s.Line(t0.Add(3*time.Second), 0), "Services 1200/5000 (24%), 400/s, ~9.5s left; slowest shop/web 1.2s"; got != want {
		t.Errorf("after 3 s:\n got %q\nwant %q", got, want)
	}
	// Under a second: no rate yet.
	if got, want := s.Line(t0.Add(500*time.Millisecond), 0), "Services 1200/5000 (24%); slowest shop/web 1.2s"; got != want {
		t.Errorf("after 0.5 s:\n got %q\nwant %q", got, want)
	}
	// Slow runs show a decimal rate.
	slow := State{Total: 10, Start: t0, Done: 3}
	if got, want := slow.Line(t0.Add(2*time.Second), 0), "Services 3/10 (30%), 1.5/s, ~4.7s left"; got != want {
		t.Errorf("slow:\n got %q\nwant %q", got, want)
	}
	// All done: no time left.
	all := State{Total: 2, Start: t0, Done: 2}
	if got, want := all.Line(t0.Add(4*time.Second), 0), "Services 2/2 (100%), 0.5/s"; got != want {
		t.Errorf("done:\n got %q\nwant %q", got, want)
	}
}

func TestLineWidth(t *testing.T) {
	s := State{Total: 10, Start: t0}
	s.Finish("a-very-long-namespace/a-very-long-service-name", time.Second)
	got := s.Line(t0, 20)
	if got != "Services 1/10 (10%)…" {
		t.Errorf("cut to 20: %q", got)
	}
	if n := len([]rune(got)); n != 20 {
		t.Errorf("%d columns, want 20", n)
	}
	if got := s.Line(t0, 1000); strings.Contains(got, "…") {
		t.Errorf("cut though it fits: %q", got)
	}
}

func TestSlowestKeepsTheFirstOfEqualTimes(t *testing.T) {
	var s State
	s.Finish("a/one", time.Second)
	s.Finish("a/two", time.Second)
	s.Finish("a/three", 500*time.Millisecond)
	if s.Slowest != "a/one" || s.SlowestTook != time.Second || s.Done != 3 {
		t.Errorf("got %+v", s)
	}
}

// The watch loop's first pass counts by Set and names the slowest by Took:
// Took names without counting.
func TestTookNamesTheSlowestWithoutCounting(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t: t0}
	b := New(&out, 4, c.now, 0)
	b.Took("shop/web", 2*time.Second)
	b.Took("shop/api", time.Second)
	c.t = c.t.Add(time.Second)
	b.Set(1)
	line := out.String()[strings.LastIndex(out.String(), "\r"):]
	if !strings.Contains(line, "Services 1/4 (25%)") || !strings.Contains(line, "slowest shop/web 2s") {
		t.Errorf("line %q", line)
	}
}

// clock is a fake clock moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestBarRedrawsAtMostEveryInterval(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t0}
	b := newBar(&out, 100, c.now, func() int { return 80 })
	for range 100 {
		c.t = c.t.Add(10 * time.Millisecond) // 100 Services in 1 s
		b.Finish("ns/svc", time.Millisecond)
	}
	// Draws at 10 ms, then at 260, 510 and 760 ms (1,000 ms is too soon).
	if n := strings.Count(out.String(), "\r\033[K"); n != 4 {
		t.Errorf("%d draws in 1 s, want 4:\n%q", n, out.String())
	}
	draws := strings.Split(out.String(), "\r\033[K")
	if last := draws[len(draws)-1]; last != "Services 76/100 (76%); slowest ns/svc 1ms" {
		t.Errorf("last draw %q", last)
	}
	out.Reset()
	b.Done()
	if out.String() != "\r\033[K" {
		t.Errorf("Done wrote %q, want the line cleared", out.String())
	}
	out.Reset()
	b.Done()
	if out.Len() != 0 {
		t.Errorf("a second Done wrote %q", out.String())
	}
}

func TestBarFitsTheTerminal(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out, 10, (&clock{t0}).now, func() int { return 21 })
	b.Finish("a-very-long-namespace/a-very-long-service-name", time.Second)
	line := strings.TrimPrefix(out.String(), "\r\033[K")
	if n := len([]rune(line)); n != 20 {
		t.Errorf("%q: %d columns on a terminal of 21, want 20", line, n)
	}
}

func TestAroundClearsTheLineBeforeOtherOutput(t *testing.T) {
	var term bytes.Buffer
	c := &clock{t0}
	b := newBar(&term, 10, c.now, func() int { return 80 })
	b.Finish("ns/a", time.Millisecond)
	w := b.Around(&term)
	term.Reset()
	if _, err := w.Write([]byte("service ns/a: created 1 slice\n")); err != nil {
		t.Fatal(err)
	}
	if got, want := term.String(), "\r\033[Kservice ns/a: created 1 slice\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The bar comes back at once, not an Interval later.
	term.Reset()
	b.Set(2)
	if !strings.HasPrefix(term.String(), "\r\033[KServices 2/10") {
		t.Errorf("not redrawn after other output: %q", term.String())
	}
}

func TestNilBarDrawsNothing(t *testing.T) {
	var b *Bar
	b.Finish("ns/a", time.Second)
	b.Set(3)
	b.Done()
	var out bytes.Buffer
	if b.Around(&out) != &out {
		t.Error("a nil Bar wraps the writer")
	}
	// A stream that is not a terminal gets no Bar.
	if Start(&out, 10) != nil {
		t.Error("a Bar on a buffer")
	}
}

// The rate counts from when the first Service began, not from when the Bar
// was made (a one-shot run reads the cluster first).
func TestBarRateFromTheFirstService(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t0}
	b := newBar(&out, 10, c.now, func() int { return 200 })
	c.t = c.t.Add(5 * time.Second) // reading the cluster
	b.Finish("ns/a", time.Second)  // began 4 s after the Bar was made
	c.t = c.t.Add(time.Second)
	b.Finish("ns/b", time.Second)
	draws := strings.Split(out.String(), "\r\033[K")
	// 2 done in the 2 s since the first began: 1/s, 8 left: 8 s.
	if last := draws[len(draws)-1]; last != "Services 2/10 (20%), 1.0/s, ~8s left; slowest ns/a 1s" {
		t.Errorf("last draw %q", last)
	}
}
