package controller

import (
	"bytes"
	"errors"
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
