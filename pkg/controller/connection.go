package controller

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
)

// WrapTransport watches the client's requests for the connection to the API
// server: the first failure of an outage is reported once ("lost"), the
// first answer after it once ("reconnected"), and the hooks of OnReconnect
// are called then. A failure is a request that got no answer, whether it
// failed or its deadline passed (a partition answers nothing, and the
// loop's own question, contact, has a deadline), and a watch whose stream
// broke (an informer's cache then misses what follows until it lists
// again), but not a request its caller cancelled. Every answer, and every
// event a watch reads, dates the API server's last word (Heard). Informers
// retry and relist on their own; this tells the user and the catch-up.
func (r *Reporter) WrapTransport(next http.RoundTripper) http.RoundTripper {
	r.wrapped.Store(true)
	// Blindness is counted from the start until a first answer.
	r.heard.CompareAndSwap(0, r.now().UnixNano())
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		if err != nil {
			if !errors.Is(req.Context().Err(), context.Canceled) {
				r.lost(err)
			}
			return resp, err
		}
		r.answered()
		if q := req.URL.Query().Get("watch"); q == "true" || q == "1" {
			resp.Body = &watchBody{ReadCloser: resp.Body, r: r, ctx: req.Context()}
		}
		return resp, nil
	})
}

// lost notes the first failure of an outage, and says so once.
func (r *Reporter) lost(err error) {
	r.mu.Lock()
	first := r.lostAt.IsZero()
	if first {
		r.lostAt = r.now()
	}
	r.mu.Unlock()
	if first {
		r.emit(printers.LoopEvent{Type: "reconnect", Message: "lost: " + err.Error()}, printers.LoopLost(err.Error()))
	}
}

// answered dates an answer and, after an outage, says the connection is
// back once and calls the hooks.
func (r *Reporter) answered() {
	r.heard.Store(r.now().UnixNano())
	r.mu.Lock()
	lost := r.lostAt
	r.lostAt = time.Time{}
	hooks := r.reconnected
	r.mu.Unlock()
	if lost.IsZero() {
		return
	}
	d := r.now().Sub(lost).Round(100 * time.Millisecond)
	r.emit(printers.LoopEvent{Type: "reconnect", Message: "reconnected after " + d.String()}, printers.LoopReconnected(d))
	for _, f := range hooks {
		f()
	}
}

// watchBody is a watch's stream: what it reads is heard from the API
// server; a read that fails other than at the stream's end, while its
// caller still wants it (it has neither cancelled the request nor closed
// the stream, as the reflector does to end a watch), is a lost connection.
type watchBody struct {
	io.ReadCloser
	r      *Reporter
	ctx    context.Context
	closed atomic.Bool
}

func (b *watchBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.r.heard.Store(b.r.now().UnixNano())
	}
	if err != nil && err != io.EOF && b.ctx.Err() == nil && !b.closed.Load() {
		b.r.lost(err)
	}
	return n, err
}

func (b *watchBody) Close() error {
	b.closed.Store(true)
	return b.ReadCloser.Close()
}

// Heard is when the API server last answered a request of the client
// WrapTransport wraps, or sent an event on one of its watches (before the
// first answer, when it was wrapped); ok is false when no client is
// wrapped, and nothing can be said.
func (r *Reporter) Heard() (at time.Time, ok bool) {
	if !r.wrapped.Load() {
		return time.Time{}, false
	}
	return time.Unix(0, r.heard.Load()), true
}

// OnReconnect has f called (on the request's goroutine, so it must not
// block) at the first answer after a lost connection.
func (r *Reporter) OnReconnect(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reconnected = append(r.reconnected, f)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
