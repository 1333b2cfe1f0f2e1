package progress

import (
	"io"
	"time"
)

// Lazy is a Bar started at the first step, when the number of Services is
// known (check learns it once they are read), and only for more than one.
type Lazy struct {
	w       io.Writer
	bar     *Bar
	started bool
}

// NewLazy returns a Lazy bar on w (a terminal, as Start).
func NewLazy(w io.Writer) *Lazy { return &Lazy{w: w} }

// Step records one Service of total done in took.
func (l *Lazy) Step(total int, key string, took time.Duration) {
	if !l.started && total > 1 {
		l.bar, l.started = Start(l.w, total), true
	}
	l.bar.Finish(key, took)
}

// Done clears the line, if one was drawn.
func (l *Lazy) Done() { l.bar.Done() }
