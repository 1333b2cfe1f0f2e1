package printers

import (
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

func nSlices(n int) []*discovery.EndpointSlice { return make([]*discovery.EndpointSlice, n) }

// Each of the loop's lines, exactly: the e2e tests and users' log filters
// match on them.
func TestLoopLines(t *testing.T) {
	res := outcome.Result{Created: nSlices(1), Updated: nSlices(2)}
	reasons := []string{"pod a added", "pod b ready", "pod c removed", "pod d not ready", "pod e terminating", "pod f changed", "pod g added"}
	summary := LoopEvent{Syncs: 7, Writes: 5, Created: 1, Updated: 3, Deleted: 1, Errors: 2, Stale: 4, Queue: 6}
	for _, c := range []struct{ got, want string }{
		{LoopNotice("", "watching all namespaces; caches filled"), "watching all namespaces; caches filled"},
		{LoopNotice("shop/web", "kube-controller-manager's slices are current"), "service shop/web: kube-controller-manager's slices are current"},
		{LoopWrite("shop/web", res, reasons[:2]), "service shop/web: created 1 slice, updated 2 slices: pod a added, pod b ready"},
		{LoopWrite("shop/web", res, reasons),
			"service shop/web: created 1 slice, updated 2 slices: pod a added, pod b ready, pod c removed, pod d not ready, pod e terminating, and 2 more"},
		{LoopRemoved("shop/web", outcome.Result{Deleted: nSlices(3)}), "service shop/web: deleted 3 slices: service deleted"},
		{LoopError("shop/web", "forbidden"), "error: service shop/web: forbidden (retrying with backoff)"},
		{LoopSummary(summary), "summary: 7 syncs, 5 writes (1 created, 3 updated, 1 deleted), 2 failed syncs, 4 waits for the cache, 6 Services queued"},
		{LoopLost("dial tcp: connection refused"), "lost the connection to the API server (dial tcp: connection refused); retrying"},
		{LoopReconnected(2300 * time.Millisecond), "reconnected to the API server after 2.3s; the caches catch up by relisting"},
		{LoopEndpoints("shop/web", "updated", "2 ready, 1 not ready addresses"), "endpoints shop/web: updated: 2 ready, 1 not ready addresses"},
		{LoopEndpoints("shop/web", "deleted", ""), "endpoints shop/web: deleted"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}

// A line is the time and the text, or the event as one JSON object.
func TestLoopLine(t *testing.T) {
	e := LoopEvent{Time: "2026-01-02T03:04:05Z", Type: "write", Service: "shop/web", Created: 1, Reasons: []string{"pod a added"}}
	if got, want := LoopLine(e, "the text", false), "2026-01-02T03:04:05Z the text\n"; got != want {
		t.Errorf("text: got %q, want %q", got, want)
	}
	want := `{"time":"2026-01-02T03:04:05Z","type":"write","service":"shop/web","created":1,"reasons":["pod a added"]}` + "\n"
	if got := LoopLine(e, "the text", true); got != want {
		t.Errorf("JSON: got %q, want %q", got, want)
	}
}
