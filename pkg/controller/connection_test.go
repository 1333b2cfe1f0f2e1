package controller

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type answers struct{ errs []error }

func (a *answers) RoundTrip(*http.Request) (*http.Response, error) {
	err := a.errs[0]
	a.errs = a.errs[1:]
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
}

// The watched transport dates the API server's last answer (from the
// start, before the first), and calls the reconnection hooks once, at the
// first answer after a lost connection.
func TestReporterHearsTheAPIServer(t *testing.T) {
	var out, errOut bytes.Buffer
	r := NewReporter(&out, &errOut, false)
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	if _, ok := r.Heard(); ok {
		t.Fatal("heard before any transport is watched")
	}
	refused := errors.New("connection refused")
	rt := r.WrapTransport(&answers{errs: []error{nil, refused, refused, nil, nil}})
	if at, ok := r.Heard(); !ok || !at.Equal(now) {
		t.Fatalf("heard %v %v at the start, want the start", at, ok)
	}
	hooks := 0
	r.OnReconnect(func() { hooks++ })
	send := func() {
		req, _ := http.NewRequest(http.MethodGet, "https://api/version", nil)
		if resp, err := rt.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
		now = now.Add(time.Second)
	}
	send() // answered at 1000
	send() // refused at 1001
	send() // refused at 1002
	if at, _ := r.Heard(); !at.Equal(time.Unix(1000, 0)) {
		t.Fatalf("heard at %v, want the last answer at 1000", at)
	}
	if hooks != 0 {
		t.Fatal("reconnected while refused")
	}
	send() // answered at 1003
	send() // answered at 1004
	if at, _ := r.Heard(); !at.Equal(time.Unix(1004, 0)) || hooks != 1 {
		t.Fatalf("heard at %v with %d hooks called, want 1004 and 1", at, hooks)
	}
	if !strings.Contains(out.String(), "reconnected to the API server after 2s") {
		t.Fatalf("output %q", out.String())
	}
}

// brokenBody reads one event, then fails as a cut connection does.
type brokenBody struct{ reads int }

func (b *brokenBody) Read(p []byte) (int, error) {
	b.reads++
	if b.reads == 1 {
		return copy(p, "{}"), nil
	}
	return 0, errors.New("http2: client connection lost")
}
func (b *brokenBody) Close() error { return nil }

type streams struct{ bodies []*brokenBody }

func (s *streams) RoundTrip(*http.Request) (*http.Response, error) {
	b := &brokenBody{}
	s.bodies = append(s.bodies, b)
	return &http.Response{StatusCode: 200, Body: b}, nil
}

// A watch whose stream breaks is a lost connection; one the caller closed,
// or whose request it cancelled, is not; the next answer is a
// reconnection. A request whose deadline passed unanswered is lost too.
func TestReporterHearsBrokenWatches(t *testing.T) {
	var out, errOut bytes.Buffer
	r := NewReporter(&out, &errOut, false)
	hooks := 0
	r.OnReconnect(func() { hooks++ })
	rt := r.WrapTransport(&streams{})
	watch := func(ctx context.Context) io.ReadCloser {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://api/api/v1/pods?watch=true", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Body
	}
	buf := make([]byte, 8)
	closed := watch(context.Background())
	closed.Read(buf)
	closed.Close()
	closed.Read(buf)
	cancelled, cancel := context.WithCancel(context.Background())
	body := watch(cancelled)
	body.Read(buf)
	cancel()
	body.Read(buf)
	if strings.Contains(errOut.String(), "lost") {
		t.Fatalf("a watch its caller ended was taken for a lost connection: %s", errOut.String())
	}
	body = watch(context.Background())
	body.Read(buf)
	body.Read(buf)
	if !strings.Contains(errOut.String(), "lost the connection to the API server (http2: client connection lost)") {
		t.Fatalf("a broken watch was not a lost connection: %q", errOut.String())
	}
	watch(context.Background())
	if hooks != 1 {
		t.Fatalf("%d reconnection hooks called, want 1", hooks)
	}

	errOut.Reset()
	late, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	rt = r.WrapTransport(&answers{errs: []error{context.DeadlineExceeded}})
	req, _ := http.NewRequestWithContext(late, http.MethodGet, "https://api/version", nil)
	rt.RoundTrip(req)
	if !strings.Contains(errOut.String(), "lost the connection") {
		t.Fatalf("a request unanswered by its deadline was not a lost connection: %q", errOut.String())
	}
}
