// Package progress shows how a long run over many Services is going, on
// one line of a terminal redrawn in place: Services done of the total, the
// rate, the time left at that rate and the slowest Service so far.
//
// The rendering (State.Line) is pure, over a clock the caller passes, so it
// is tested without a terminal; Bar is the thin writer around it, which
// draws at most a few times a second and only when its stream is a
// terminal: output piped or redirected carries none of it.
package progress
