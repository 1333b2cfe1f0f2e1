package dnsexpect

import (
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func qsOf() []Question {
	return []Question{
		{Name: base, Type: TypeA, Want: []Record{{base, TypeA, "10.1.0.1"}}},
		{Name: "gone." + base, Type: TypeA},
	}
}

func ans(name, typ, rcode string, data ...string) Answer {
	a := Answer{Name: name, Type: typ, Rcode: rcode, TTL: 30}
	for _, d := range data {
		a.Records = append(a.Records, Record{name, typ, d})
	}
	return a
}

func TestCompareOK(t *testing.T) {
	r := Compare(qsOf(), Index([]Answer{ans(base, TypeA, "NOERROR", "10.1.0.1"), ans("gone."+base, TypeA, "NXDOMAIN")}),
		DefaultTiming(t0, t0))
	if r.Status != OK || len(r.Answers) != 2 {
		t.Errorf("got %+v", r)
	}
}

// A missing and an extra record are drift, named, once the change is older
// than the window; younger, the same difference is pending.
func TestCompareDriftAndPending(t *testing.T) {
	got := []Answer{ans(base, TypeA, "NOERROR", "10.1.0.2"), ans("gone."+base, TypeA, "NOERROR", "10.1.0.9")}
	tm := DefaultTiming(t0, t0.Add(36*time.Second))
	r := Compare(qsOf(), Index(got), tm)
	if r.Status != Drift || len(r.Missing) != 1 || len(r.Extra) != 2 ||
		!strings.Contains(r.Reason, "missing A "+base+" 10.1.0.1") || !strings.Contains(r.Reason, "extra A "+base+" 10.1.0.2 (and 1 more)") {
		t.Errorf("drift: %+v", r)
	}
	tm.Now = t0.Add(34 * time.Second)
	if r := Compare(qsOf(), Index(got), tm); r.Status != Pending {
		t.Errorf("within the window: %+v", r)
	}
	tm.Changed = time.Time{}
	if r := Compare(qsOf(), Index(got), tm); r.Status != Drift {
		t.Errorf("change time unknown: %+v", r)
	}
}

// A failed or refused answer is unknown, unless another answer differs.
func TestCompareUnknown(t *testing.T) {
	tm := DefaultTiming(t0, t0.Add(time.Hour))
	r := Compare(qsOf(), Index([]Answer{ans(base, TypeA, "SERVFAIL"), ans("gone."+base, TypeA, "NXDOMAIN")}), tm)
	if r.Status != Unknown || !strings.Contains(r.Reason, "SERVFAIL") {
		t.Errorf("servfail: %+v", r)
	}
	r = Compare(qsOf(), Index([]Answer{ans(base, TypeA, "NOERROR", "10.1.0.1")}), tm)
	if r.Status != Unknown || !strings.Contains(r.Reason, "not asked") {
		t.Errorf("unanswered: %+v", r)
	}
	r = Compare(qsOf(), Index([]Answer{{Name: base, Type: TypeA, Err: "read: timeout"}, ans("gone."+base, TypeA, "NOERROR", "10.1.0.9")}), tm)
	if r.Status != Drift {
		t.Errorf("a difference beside an error: %+v", r)
	}
}

// The window: slack, plus the plugin ttl clamped to [5s, cache max TTL]
// when the cache holds the domain.
func TestWindow(t *testing.T) {
	for _, c := range []struct {
		plugin, cache, want time.Duration
	}{
		{30 * time.Second, 30 * time.Second, 35 * time.Second},
		{30 * time.Second, 0, 5 * time.Second},
		{0, 30 * time.Second, 10 * time.Second},
		{60 * time.Second, 30 * time.Second, 35 * time.Second},
	} {
		tm := Timing{PluginTTL: c.plugin, CacheTTL: c.cache, Slack: 5 * time.Second}
		if got := tm.Window(); got != c.want {
			t.Errorf("plugin %s cache %s: window %s, want %s", c.plugin, c.cache, got, c.want)
		}
	}
}

func TestLastChange(t *testing.T) {
	svc := service("None")
	svc.CreationTimestamp = metav1.NewTime(t0)
	s := slice("a", "web", ep{ip: "10.1.0.1"})
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Time: ptrTime(t0.Add(time.Minute))}, {Time: ptrTime(t0.Add(2 * time.Minute))}}
	other := slice("b", "other")
	other.ManagedFields = []metav1.ManagedFieldsEntry{{Time: ptrTime(t0.Add(time.Hour))}}
	if got := LastChange(svc, []*discoveryv1.EndpointSlice{s, other}); !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("got %s", got)
	}
}

func ptrTime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// One replica over several Services: the worst status wins, a difference
// before an unread answer, with every result's evidence.
func TestCombine(t *testing.T) {
	ok := Result{Status: OK, Answers: []Answer{{Name: "a."}}}
	unknown := Result{Status: Unknown, Reason: "A b.: timed out", Answers: []Answer{{Name: "b."}}}
	pending := Result{Status: Pending, Reason: "missing A c. 10.0.0.1 (1s after)", Missing: []Record{{"c.", "A", "10.0.0.1"}}}
	drift := Result{Status: Drift, Reason: "extra A d. 10.0.0.2", Extra: []Record{{"d.", "A", "10.0.0.2"}}}
	for _, c := range []struct {
		name   string
		in     []Result
		status Status
		reason string
	}{
		{"all ok", []Result{ok, ok}, OK, "2 answers as expected"},
		{"unknown over ok", []Result{ok, unknown}, Unknown, "A b.: timed out"},
		{"pending over unknown", []Result{unknown, pending, ok}, Pending, "missing A c. 10.0.0.1 (1s after)"},
		{"drift over all", []Result{pending, drift, unknown, drift}, Drift, "extra A d. 10.0.0.2; and 1 more DRIFT"},
		{"none", nil, OK, "nothing to ask"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Combine(c.in)
			if r.Status != c.status || r.Reason != c.reason {
				t.Errorf("got %s %q, want %s %q", r.Status, r.Reason, c.status, c.reason)
			}
			n := 0
			for _, x := range c.in {
				n += len(x.Answers) + len(x.Missing) + len(x.Extra)
			}
			if len(r.Answers)+len(r.Missing)+len(r.Extra) != n {
				t.Errorf("evidence lost: %+v", r)
			}
		})
	}
}
