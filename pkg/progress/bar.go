package progress

import (
	"io"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
	"golang.org/x/term"
)

// Interval is the least time between two redraws: a few a second is
// readable and costs nothing however fast Services finish.
const Interval = 250 * time.Millisecond

// Bar draws a State on one line of a terminal. A nil *Bar draws nothing,
// so callers need not ask whether their stream is a terminal.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	now   func() time.Time
	width func() int
	state State
	drawn time.Time // when last drawn; zero: not yet
	shown bool      // a line is on the terminal
}

// Start returns a Bar over total Services on w when w is a terminal, and
// nil (draw nothing) otherwise.
func Start(w io.Writer, total int) *Bar {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return nil
	}
	fd := int(f.Fd())
	b := newBar(w, total, time.Now, func() int {
		if cols, _, err := term.GetSize(fd); err == nil {
			return cols
		}
		return 80
	})
	if total > 0 {
		// At once: reading the cluster before the first Service is done
		// may take seconds.
		b.maybeDraw()
	}
	return b
}

// New draws on w whatever w is, with the clock and terminal width given
// (Start is New for a terminal, and nil otherwise); for tests of callers.
func New(w io.Writer, total int, now func() time.Time, width int) *Bar {
	return newBar(w, total, now, func() int { return width })
}

func newBar(w io.Writer, total int, now func() time.Time, width func() int) *Bar {
	return &Bar{w: w, now: now, width: width, state: State{Total: total, Start: now()}}
}

// Begin starts the run over again with total Services, for a Bar made
// before the total was known (the watch loop's, made before its caches
// fill), and draws it.
func (b *Bar) Begin(total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// The slowest so far stays: the watch loop's workers may finish a
	// Service before its first pass knows the total.
	b.state = State{Total: total, Start: b.now(), Slowest: b.state.Slowest, SlowestTook: b.state.SlowestTook}
	b.drawn = time.Time{}
	b.maybeDraw()
}

// Finish records one Service done after took and redraws if the last
// draw is at least Interval old.
func (b *Bar) Finish(key string, took time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state.Done == 0 {
		// The work began when the first Service did, not when the Bar
		// was made: reading the cluster first is no part of the rate.
		b.state.Start = b.now().Add(-took)
	}
	b.state.Finish(key, took)
	b.maybeDraw()
}

// Took records how long one Service took, for the slowest the line names,
// without counting it done (Set counts).
func (b *Bar) Took(key string, took time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Took(key, took)
}

// Set sets how many Services are done, for a run that only knows the count
// (the watch loop's first pass), and redraws as Finish does.
func (b *Bar) Set(done int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Done = min(done, b.state.Total)
	b.maybeDraw()
}

func (b *Bar) maybeDraw() {
	now := b.now()
	if !b.drawn.IsZero() && now.Sub(b.drawn) < Interval {
		return
	}
	b.drawn, b.shown = now, true
	// One column short of the width: a line filling the last column
	// leaves the cursor past it on some terminals, and the next \r then
	// redraws the line below.
	_, _ = io.WriteString(b.w, "\r\033[K"+b.state.Line(now, b.width()-1))
}

// Done clears the line: what the run prints next starts on a clean line.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
}

func (b *Bar) clear() {
	if b.shown {
		_, _ = io.WriteString(b.w, "\r\033[K")
		b.shown = false
	}
}

// Around returns a writer that clears the progress line before each write
// to w, so that lines printed while the bar runs (the watch loop's writes)
// start on a clean line; the bar comes back at its next redraw.
func (b *Bar) Around(w io.Writer) io.Writer {
	if b == nil {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.clear()
		b.drawn = time.Time{} // redraw at the next chance
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
