package daemon

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func TestIsFencedWrite(t *testing.T) {
	cases := []struct {
		method, path string
		want         bool
	}{
		{"POST", "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices", true},
		{"PUT", "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices/web-abc", true},
		{"DELETE", "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices/web-abc", true},
		{"PATCH", "/api/v1/namespaces/ns/endpoints/web", true},
		{"POST", "/api/v1/namespaces/ns/events", true},
		{"PATCH", "/apis/events.k8s.io/v1/namespaces/ns/events/x", true},
		{"GET", "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices", false},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubectl-slices", false},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", false},
		{"POST", "/apis/authentication.k8s.io/v1/tokenreviews", false},
		// A namespace named like a fenced resource is not one.
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/endpoints/leases/x", false},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, "https://api"+c.path, nil)
		if got := isFencedWrite(req); got != c.want {
			t.Errorf("%s %s: fenced %v, want %v", c.method, c.path, got, c.want)
		}
	}
}

// fakeLock is a resourcelock.Interface whose record and answers a test sets.
type fakeLock struct {
	id      string
	rec     resourcelock.LeaderElectionRecord
	getErr  error
	sendErr error
	sent    []resourcelock.LeaderElectionRecord
}

func (l *fakeLock) Get(context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	if l.getErr != nil {
		return nil, nil, l.getErr
	}
	r := l.rec
	return &r, nil, nil
}
func (l *fakeLock) Create(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.send(r)
}
func (l *fakeLock) Update(_ context.Context, r resourcelock.LeaderElectionRecord) error {
	return l.send(r)
}
func (l *fakeLock) send(r resourcelock.LeaderElectionRecord) error {
	if l.sendErr != nil {
		return l.sendErr
	}
	l.sent = append(l.sent, r)
	l.rec = r
	return nil
}
func (l *fakeLock) RecordEvent(string) {}
func (l *fakeLock) Identity() string   { return l.id }
func (l *fakeLock) Describe() string   { return "ns/lease" }

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A renewal keeps writes open for the renew deadline from when it was sent;
// a failed one does not; the fence then refuses writes, and a release closes
// it at once.
func TestFenceFollowsRenewals(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f := NewFence(4 * time.Second)
	f.now = clk.now
	inner := &fakeLock{id: "me"}
	lock := f.Lock(inner)
	if !f.Until().IsZero() {
		t.Fatal("a new fence is open")
	}
	if err := lock.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Until(), clk.t.Add(4*time.Second); !got.Equal(want) {
		t.Fatalf("fence until %v after acquiring, want %v", got, want)
	}
	clk.t = clk.t.Add(2 * time.Second)
	inner.sendErr = errors.New("timeout")
	if err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err == nil {
		t.Fatal("the failed renewal succeeded")
	}
	if got, want := f.Until(), time.Unix(1004, 0); !got.Equal(want) {
		t.Fatalf("a failed renewal moved the fence to %v, want %v", got, want)
	}
	inner.sendErr = nil
	if err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Until(), time.Unix(1006, 0); !got.Equal(want) {
		t.Fatalf("fence until %v after renewing, want %v", got, want)
	}
	// The release: the Lease still names us, so it is sent, after the
	// fence closed.
	if _, _, err := lock.Get(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{}); err != nil {
		t.Fatalf("release of our own Lease refused: %v", err)
	}
	if !f.Until().IsZero() {
		t.Fatal("the fence stayed open after the release")
	}
}

// client-go's release reads the Lease and then judges leadership from its
// older record: a Lease another replica took meanwhile is not cleared.
func TestFenceRefusesReleasingAnotherHoldersLease(t *testing.T) {
	f := NewFence(4 * time.Second)
	inner := &fakeLock{id: "me"}
	lock := f.Lock(inner)
	if err := lock.Create(context.Background(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"}); err != nil {
		t.Fatal(err)
	}
	inner.rec = resourcelock.LeaderElectionRecord{HolderIdentity: "successor"}
	if _, _, err := lock.Get(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := lock.Update(context.Background(), resourcelock.LeaderElectionRecord{})
	if err == nil || !strings.Contains(err.Error(), `held by "successor"`) {
		t.Fatalf("release of the successor's Lease: %v, want refused", err)
	}
	if len(inner.sent) != 1 || inner.rec.HolderIdentity != "successor" {
		t.Fatalf("the Lease was written: %+v", inner.rec)
	}
	if !f.Until().IsZero() {
		t.Fatal("the fence stayed open after a release")
	}
}

// roundTrip records the requests it is sent and their deadlines.
type recorder struct {
	sent      []string
	deadlines []time.Time
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.sent = append(r.sent, req.Method+" "+req.URL.Path)
	d, _ := req.Context().Deadline()
	r.deadlines = append(r.deadlines, d)
	return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
}

func TestFenceWrapSendsWritesOnlyBeforeIt(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	f := NewFence(4 * time.Second)
	f.now = clk.now
	next := &recorder{}
	rt := f.Wrap(next)
	do := func(method, path string) error {
		req, _ := http.NewRequest(method, "https://api"+path, nil)
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	slice := "/apis/discovery.k8s.io/v1/namespaces/ns/endpointslices"
	var fe *FencedError
	if err := do("POST", slice); !errors.As(err, &fe) || !strings.Contains(err.Error(), "does not hold the Lease") {
		t.Fatalf("a write before leading: %v, want fenced", err)
	}
	if err := do("GET", slice); err != nil {
		t.Fatalf("a read before leading: %v", err)
	}
	f.renewedAt(clk.t)
	clk.t = clk.t.Add(3 * time.Second)
	if err := do("POST", slice); err != nil {
		t.Fatalf("a write within the fence: %v", err)
	}
	if got, want := next.deadlines[len(next.deadlines)-1], time.Unix(1004, 0); !got.Equal(want) {
		t.Fatalf("the write's deadline is %v, want the fence %v", got, want)
	}
	clk.t = clk.t.Add(time.Second)
	err := do("PUT", slice+"/web-1")
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "last renewed 4s ago") {
		t.Fatalf("a write at the fence: %v, want fenced", err)
	}
	if err := do("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l"); err != nil {
		t.Fatalf("the Lease's own write was fenced: %v", err)
	}
	if want := []string{"GET " + slice, "POST " + slice, "PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l"}; strings.Join(next.sent, ",") != strings.Join(want, ",") {
		t.Fatalf("sent %v, want %v", next.sent, want)
	}
}
