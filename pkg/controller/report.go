package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Reporter prints what the controller does: one line per write (time,
// Service, what changed and why), notices, errors, reconnects and a periodic
// summary; as text or, with JSON, one object per line for machines.
type Reporter struct {
	mu   sync.Mutex
	out  io.Writer
	json bool
	now  func() time.Time

	writes, created, updated, deleted, errors, stale atomic.Int64
	lastErr                                          map[string]string
	down                                             map[string]string // informer → resourceVersion when the watch was lost
}

// NewReporter prints to out, as JSON lines when asJSON.
func NewReporter(out io.Writer, asJSON bool) *Reporter {
	return &Reporter{out: out, json: asJSON, now: time.Now, lastErr: map[string]string{}, down: map[string]string{}}
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
	fmt.Fprintf(r.out, "%s %s\n", e.Time, text)
}

// Notice prints a one-off remark, about a Service or the whole run.
func (r *Reporter) Notice(service, msg string) {
	text := msg
	if service != "" {
		text = "service " + service + ": " + msg
	}
	r.emit(Event{Type: "notice", Service: service, Message: msg}, text)
}

// Write reports the writes of one sync and the Pod changes behind them.
func (r *Reporter) Write(service string, in reconcile.Input, plan *reconcile.Plan, res apply.Result) {
	r.count(res)
	reasons := Changes(in, plan)
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
	e := Event{Type: "summary", Writes: r.writes.Load(), Errors: r.errors.Load(), Stale: r.stale.Load(), Queue: queue,
		Created: int(r.created.Load()), Updated: int(r.updated.Load()), Deleted: int(r.deleted.Load())}
	r.emit(e, fmt.Sprintf("summary: %d writes (%d created, %d updated, %d deleted), %d failed syncs, %d waits for the cache, %d Services queued",
		e.Writes, e.Created, e.Updated, e.Deleted, e.Errors, e.Stale, queue))
}

// watchErrorHandler reports a lost watch once per outage, and its return
// once the informer has relisted, then hands the error to client-go's
// default handler (which logs through klog at -v).
func (r *Reporter) watchErrorHandler(name string, inf cache.SharedIndexInformer) cache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, ref *cache.Reflector, err error) {
		r.mu.Lock()
		_, already := r.down[name]
		if !already {
			r.down[name] = inf.LastSyncResourceVersion()
		}
		r.mu.Unlock()
		if !already {
			r.emit(Event{Type: "reconnect", Message: name + ": " + err.Error()}, "lost the watch of "+name+" ("+err.Error()+"); reconnecting")
			go r.awaitResume(ctx, name, inf)
		}
		cache.DefaultWatchErrorHandler(ctx, ref, err)
	}
}

// awaitResume waits for the informer to list or watch again.
func (r *Reporter) awaitResume(ctx context.Context, name string, inf cache.SharedIndexInformer) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		rv := r.down[name]
		resumed := inf.LastSyncResourceVersion() != rv
		if resumed {
			delete(r.down, name)
		}
		r.mu.Unlock()
		if resumed {
			r.emit(Event{Type: "reconnect", Message: name + ": resumed"}, "watch of "+name+" resumed")
			return
		}
	}
}

func counts(res apply.Result) string {
	var parts []string
	for _, p := range []struct {
		n    int
		verb string
	}{{len(res.Created), "created"}, {len(res.Updated), "updated"}, {len(res.Deleted), "deleted"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d %s", p.verb, p.n, plural(p.n, "slice", "slices")))
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func shorten(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}
