package daemon

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Fence keeps a replica that may no longer lead from writing.
//
// client-go's elector promises no single leader: a leader cut off from the
// API server learns it lost the Lease only when its renewal times out, and
// on a failed renewal it first releases the Lease, judging from its stale
// record that it still leads, and only then says it stopped leading. Writes
// planned before the loss went out in the meantime, after the successor
// took over, and the release cleared the successor's Lease.
//
// The fence is time the Lease is known to be ours, by our own clock: a
// successful renewal sent at t makes it ours until t + RenewDeadline. No
// other replica can take the Lease before t + LeaseDuration (it counts the
// duration from when it saw our renewal, which was after we sent it), and
// RenewDeadline < LeaseDuration leaves the difference for clock rates and
// latency. Every write of the loop (EndpointSlices, Endpoints, Events) is
// sent only before the fence, with the fence as its deadline (Wrap). A
// release is sent only when the Lease, just read, names us (Lock).
//
// What it does not cover: a request sent before the fence that the network
// holds and delivers after it. Updates carry the resourceVersion they
// read, so one that arrives after the successor wrote the same slice
// conflicts; a create or delete held that long is not prevented.
type Fence struct {
	renewDeadline time.Duration
	now           func() time.Time

	mu      sync.Mutex
	until   time.Time // zero: not leading
	renewed time.Time // when the last successful renewal was sent
}

// NewFence returns a closed fence: nothing is written until the Lease is
// acquired through Lock.
func NewFence(renewDeadline time.Duration) *Fence {
	return &Fence{renewDeadline: renewDeadline, now: time.Now}
}

// Until is the end of the time the Lease is known to be ours; zero when it
// is not.
func (f *Fence) Until() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.until
}

// renewedAt extends the fence after a successful acquire or renewal sent at
// sent.
func (f *Fence) renewedAt(sent time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewed = sent
	if u := sent.Add(f.renewDeadline); u.After(f.until) {
		f.until = u
	}
}

// close stops every write at once (a release, a lost Lease).
func (f *Fence) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.until = time.Time{}
}

// FencedError is the error of a write the fence did not send.
type FencedError struct {
	Renewed time.Time // zero if the Lease was never held
	Now     time.Time
	Within  time.Duration
}

func (e *FencedError) Error() string {
	if e.Renewed.IsZero() {
		return "not sent: this replica does not hold the Lease"
	}
	return fmt.Sprintf("not sent: the Lease was last renewed %v ago, longer than the %v it is known to be ours",
		e.Now.Sub(e.Renewed).Round(10*time.Millisecond), e.Within)
}

// fenced are the resources the loop writes while it leads; everything else
// (the Lease itself, access reviews, the webhook's reviews) passes.
var fenced = map[string]bool{"endpointslices": true, "endpoints": true, "events": true}

// isFencedWrite reports whether r writes one of the fenced resources: a
// method other than GET, HEAD or OPTIONS on a path .../RESOURCE or
// .../RESOURCE/NAME[/SUBRESOURCE].
func isFencedWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	// /api/v1/namespaces/NS/RESOURCE[/NAME[/SUB]] or
	// /apis/GROUP/VERSION/namespaces/NS/RESOURCE[/NAME[/SUB]]
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			return fenced[parts[i+2]]
		}
	}
	return false
}

// Wrap is a transport wrapper: a fenced write is refused once the fence
// has passed and otherwise carries it as its deadline, so that nothing is
// sent after it. Other requests pass untouched.
func (f *Fence) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if !isFencedWrite(req) {
			return next.RoundTrip(req)
		}
		f.mu.Lock()
		until, renewed := f.until, f.renewed
		f.mu.Unlock()
		now := f.now()
		if !now.Before(until) {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &FencedError{Renewed: renewed, Now: now, Within: f.renewDeadline}
		}
		ctx, cancel := context.WithDeadline(req.Context(), until)
		resp, err := next.RoundTrip(req.WithContext(ctx))
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// cancelOnClose ends a request's context once its body is read and closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// Lock wraps the election's lock: a successful acquire or renewal extends
// the fence from the moment it was sent; any other record (a release)
// closes the fence before it is sent, and is sent only if the Lease, as
// the elector just read it, still names us. client-go's release reads the
// Lease, then judges leadership from its older observed record, and would
// otherwise clear a successor's Lease.
func (f *Fence) Lock(inner resourcelock.Interface) resourcelock.Interface {
	return &fencedLock{Interface: inner, fence: f}
}

type fencedLock struct {
	resourcelock.Interface
	fence *Fence

	mu     sync.Mutex
	holder string // the holder named by the record last read
	read   bool
}

func (l *fencedLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	rec, raw, err := l.Interface.Get(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.holder, l.read = rec.HolderIdentity, true
	}
	return rec, raw, err
}

func (l *fencedLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, ler, l.Interface.Create)
}

func (l *fencedLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.write(ctx, ler, l.Interface.Update)
}

func (l *fencedLock) write(ctx context.Context, ler resourcelock.LeaderElectionRecord, send func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	me := l.Identity()
	if ler.HolderIdentity != me {
		l.fence.close()
		l.mu.Lock()
		holder, read := l.holder, l.read
		l.mu.Unlock()
		if !read || holder != me {
			return fmt.Errorf("not releasing the Lease: it is held by %q, not by this replica", holder)
		}
		return send(ctx, ler)
	}
	sent := l.fence.now()
	if err := send(ctx, ler); err != nil {
		return err
	}
	l.fence.renewedAt(sent)
	return nil
}
