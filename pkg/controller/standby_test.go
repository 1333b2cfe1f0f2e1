package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/standby"
)

// The standby wiring, on a mirrored Service with no slices of the
// mirroring controller: nothing written before the threshold, ours written
// after it (TakenOver event and line), handed back once the controller's
// slice has been current for the hold (HandedBack event and line, ours
// deleted), with the metrics counting each.
func TestStandbyTakesOverAndHandsBack(t *testing.T) {
	events := record.NewFakeRecorder(10)
	metrics := NewMetrics()
	cfg := standby.Config{TakeoverAfter: 5 * time.Second, HandbackHold: 30 * time.Second, ManagedBy: "test-manager"}
	c, client, out := startedWith(t, everything, func(o *Options) { o.Standby, o.Events, o.Metrics = &cfg, events, metrics },
		service("mirrored", nil), endpointsObj("mirrored", "10.0.0.1"))
	t0 := time.Now()
	at := func(d time.Duration) { c.now = func() time.Time { return t0.Add(d) } }
	key := "ns/mirrored"
	state := func() standby.State { return c.States()[key] }

	at(0)
	syncUntil(t, c, key)
	if got := oursIn(t, client); len(got) != 0 || state() != standby.Standby {
		t.Fatalf("before the threshold: wrote %v, state %s", got, state())
	}
	at(4 * time.Second)
	syncUntil(t, c, key)
	if got := oursIn(t, client); len(got) != 0 {
		t.Fatalf("4 s after the difference: wrote %v", got)
	}
	at(5 * time.Second)
	syncUntil(t, c, key)
	if got := strings.Join(oursIn(t, client), ","); got != "10.0.0.1+" || state() != standby.Serving {
		t.Fatalf("after the threshold: ours %q, state %s", got, state())
	}
	if e := <-events.Events; !strings.Contains(e, "Normal TakenOver") {
		t.Fatalf("event %q", e)
	}
	if !strings.Contains(out.String(), "service ns/mirrored: taking over from kube-controller-manager") {
		t.Fatalf("no takeover line:\n%s", out)
	}

	// The mirroring controller comes back with the same endpoints.
	list, err := client.DiscoveryV1().EndpointSlices(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("slices %v, %v", list, err)
	}
	theirs := list.Items[0].DeepCopy()
	theirs.Name, theirs.UID, theirs.ResourceVersion = "theirs", "theirs", ""
	theirs.Labels[discovery.LabelManagedBy] = reconcile.MirroringManagedBy
	if _, err := client.DiscoveryV1().EndpointSlices(testNS).Create(context.Background(), theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return len(c.cache.SlicesOf(testNS, "mirrored")) == 2, nil
	}); err != nil {
		t.Fatal("the cache did not see the controller's slice")
	}
	at(10 * time.Second)
	syncUntil(t, c, key)
	if got := oursIn(t, client); len(got) != 1 || state() != standby.HandingBack {
		t.Fatalf("controller back: ours %v, state %s", got, state())
	}
	at(39 * time.Second)
	syncUntil(t, c, key)
	if got := oursIn(t, client); len(got) != 1 || state() != standby.HandingBack {
		t.Fatalf("within the hold: ours %v, state %s", got, state())
	}
	at(40 * time.Second)
	syncUntil(t, c, key)
	if got := oursIn(t, client); len(got) != 0 || state() != standby.Standby {
		t.Fatalf("after the hold: ours %v, state %s\n%s", got, state(), out)
	}
	if e := <-events.Events; !strings.Contains(e, "Normal HandedBack") {
		t.Fatalf("event %q", e)
	}
	if !strings.Contains(out.String(), "service ns/mirrored: handed back to kube-controller-manager (1 of ours deleted)") {
		t.Fatalf("no hand-back line:\n%s", out)
	}
	text := scrape(t, metrics)
	for _, want := range []string{"kubectl_slices_takeovers_total 1", "kubectl_slices_handbacks_total 1",
		`kubectl_slices_standby_services{state="standby"} 1`, `kubectl_slices_standby_services{state="serving"} 0`,
		"kubectl_slices_controller_lag_seconds_count 1", "kubectl_slices_controller_lag_seconds_sum 10"} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// scrape renders the registry's counters, gauges and histogram counts and
// sums one sample a line, as the exposition format writes them.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		for _, s := range mf.Metric {
			var labels []string
			for _, l := range s.Label {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			name := mf.GetName()
			if len(labels) > 0 {
				name += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case s.Counter != nil:
				fmt.Fprintf(&b, "%s %g\n", name, s.Counter.GetValue())
			case s.Gauge != nil:
				fmt.Fprintf(&b, "%s %g\n", name, s.Gauge.GetValue())
			case s.Histogram != nil:
				fmt.Fprintf(&b, "%s_count %d\n%s_sum %g\n", name, s.Histogram.GetSampleCount(), name, s.Histogram.GetSampleSum())
			}
		}
	}
	return b.String()
}
