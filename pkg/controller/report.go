package controller

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Reporter prints what the controller does: one line per write (time,
// Service, what changed and why), notices, errors, reconnects and a periodic
// summary; as text or, with JSON, one object per line for machines.
type Reporter struct {
	mu          sync.Mutex
	out, errOut io.Writer
	json        bool
	now         func() time.Time

	syncs, writes, created, updated, deleted, errors, stale atomic.Int64
	lastErr                                                 map[string]string
	lostAt                                                  time.Time // when the connection was lost; zero while up
}

// NewReporter prints to out, as JSON lines when asJSON. As text, errors
// and a lost connection go to errOut, so that stdout carries what was done;
// as JSON every line goes to out, one stream for machines.
func NewReporter(out, errOut io.Writer, asJSON bool) *Reporter {
	return &Reporter{out: out, errOut: errOut, json: asJSON, now: time.Now, lastErr: map[string]string{}}
}

// Event is one line of -o json output.
type Event struct {
	Time    string   `json:"time"`
	Type    string   `json:"type"` // write, notice, error, reconnect, summary
	Service string   `json:"service,omitempty"`
	Created int      `json:"created,omitempty"`
	Updated int      `json:"updated,omitempty"`
	Deleted int      `json:"deleted,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	Message string   `json:"message,omitempty"`
	// Summary fields.
	Syncs  int64 `json:"syncs,omitempty"`
	Writes int64 `json:"writes,omitempty"`
	Errors int64 `json:"errors,omitempty"`
	Stale  int64 `json:"staleRetries,omitempty"`
	Queue  int   `json:"queue,omitempty"`
}

func (r *Reporter) emit(e Event, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Time = r.now().UTC().Format(time.RFC3339)
	if r.json {
		b, _ := json.Marshal(e)
		fmt.Fprintf(r.out, "%s\n", b)
		return
	}
	w := r.out
	if e.Type == "error" || (e.Type == "reconnect" && strings.HasPrefix(e.Message, "lost")) {
		w = r.errOut
	}
	fmt.Fprintf(w, "%s %s\n", e.Time, text)
}

// Notice prints a one-off remark, about a Service or the whole run.
func (r *Reporter) Notice(service, msg string) {
	text := msg
	if service != "" {
		text = "service " + service + ": " + msg
	}
	r.emit(Event{Type: "notice", Service: service, Message: msg}, text)
}

// Write reports the writes of one sync and the Pod changes behind them;
// restored names the slices it put back after another writer's edit.
func (r *Reporter) Write(service string, plan *reconcile.Plan, res apply.Result, restored map[string]bool) {
	r.count(res)
	reasons := shorten(Changes(plan, restored), 50) // a first sync of 20,000 Pods is one line, not 20,000 reasons
	r.mu.Lock()
	delete(r.lastErr, service)
	r.mu.Unlock()
	r.emit(Event{Type: "write", Service: service, Created: len(res.Created), Updated: len(res.Updated), Deleted: len(res.Deleted), Reasons: reasons},
		fmt.Sprintf("service %s: %s: %s", service, counts(res), strings.Join(shorten(reasons, 5), ", ")))
}

// Removed reports the slices deleted for a Service that is gone.
func (r *Reporter) Removed(service string, res apply.Result) {
	r.count(res)
	r.emit(Event{Type: "write", Service: service, Deleted: len(res.Deleted), Reasons: []string{"service deleted"}},
		fmt.Sprintf("service %s: %s: service deleted", service, counts(res)))
}

func (r *Reporter) count(res apply.Result) {
	r.writes.Add(int64(res.Writes()))
	r.created.Add(int64(len(res.Created)))
	r.updated.Add(int64(len(res.Updated)))
	r.deleted.Add(int64(len(res.Deleted)))
}

// Error reports a failed sync, once until the message changes: a Service
// retried through an API server outage says so once.
func (r *Reporter) Error(service string, err error) {
	r.errors.Add(1)
	msg := err.Error()
	r.mu.Lock()
	same := r.lastErr[service] == msg
	r.lastErr[service] = msg
	r.mu.Unlock()
	if !same {
		r.emit(Event{Type: "error", Service: service, Message: msg}, "error: service "+service+": "+msg+" (retrying with backoff)")
	}
}

// Summary prints the running totals.
func (r *Reporter) Summary(queue int) {
	e := Event{Type: "summary", Syncs: r.syncs.Load(), Writes: r.writes.Load(), Errors: r.errors.Load(), Stale: r.stale.Load(), Queue: queue,
		Created: int(r.created.Load()), Updated: int(r.updated.Load()), Deleted: int(r.deleted.Load())}
	r.emit(e, fmt.Sprintf("summary: %d syncs, %d writes (%d created, %d updated, %d deleted), %d failed syncs, %d waits for the cache, %d Services queued",
		e.Syncs, e.Writes, e.Created, e.Updated, e.Deleted, e.Errors, e.Stale, queue))
}

// WrapTransport watches the client's requests for the connection to the API
// server: the first failure of an outage is reported once ("lost"), the
// first success after it once ("reconnected"). Informers retry and relist
// on their own; this only tells the user.
func (r *Reporter) WrapTransport(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := next.RoundTrip(req)
		switch {
		case err != nil && req.Context().Err() == nil:
			r.mu.Lock()
			first := r.lostAt.IsZero()
			if first {
				r.lostAt = r.now()
			}
			r.mu.Unlock()
			if first {
				r.emit(Event{Type: "reconnect", Message: "lost: " + err.Error()}, "lost the connection to the API server ("+err.Error()+"); retrying")
			}
		case err == nil:
			r.mu.Lock()
			lost := r.lostAt
			r.lostAt = time.Time{}
			r.mu.Unlock()
			if !lost.IsZero() {
				d := r.now().Sub(lost).Round(100 * time.Millisecond)
				r.emit(Event{Type: "reconnect", Message: "reconnected after " + d.String()}, "reconnected to the API server after "+d.String()+"; the caches catch up by relisting")
			}
		}
		return resp, err
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func counts(res apply.Result) string {
	var parts []string
	for _, p := range []struct {
		n    int
		verb string
	}{{len(res.Created), "created"}, {len(res.Updated), "updated"}, {len(res.Deleted), "deleted"}} {
		if p.n > 0 {
			parts = append(parts, p.verb+" "+english.Plural(p.n, "slice", "slices"))
		}
	}
	return strings.Join(parts, ", ")
}

func shorten(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}

// EndpointsWrite reports a write of a Service's legacy Endpoints object
// (sync --watch --with-endpoints): "created", "updated" or "deleted".
func (r *Reporter) EndpointsWrite(service, verb, detail string) {
	r.writes.Add(1)
	text := fmt.Sprintf("endpoints %s: %s", service, verb)
	if detail != "" {
		text += ": " + detail
	}
	r.emit(Event{Type: "endpoints", Service: service, Message: verb + ": " + detail}, text)
}
