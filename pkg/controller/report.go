package controller

import (
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Reporter decides when and to which stream the controller's lines are
// printed: one per write (time, Service, what changed and why), notices,
// errors, reconnects and a periodic summary; as text or, with JSON, one
// object per line for machines. pkg/printers formats them (loop.go).
type Reporter struct {
	mu          sync.Mutex
	out, errOut io.Writer
	json        bool
	now         func() time.Time

	syncs, writes, created, updated, deleted, errors, stale atomic.Int64
	lastErr                                                 map[string]string
	lostAt                                                  time.Time // when the connection was lost; zero while up

	// heard is when the API server last answered (Unix nanoseconds; at
	// first, when WrapTransport was called); the probes read it (Heard).
	heard       atomic.Int64
	wrapped     atomic.Bool
	reconnected []func()
}

// NewReporter prints to out, as JSON lines when asJSON. As text, errors
// and a lost connection go to errOut, so that stdout carries what was done;
// as JSON every line goes to out, one stream for machines.
func NewReporter(out, errOut io.Writer, asJSON bool) *Reporter {
	return &Reporter{out: out, errOut: errOut, json: asJSON, now: time.Now, lastErr: map[string]string{}}
}

// emit prints e, or its text, as one line (printers.LoopLine); the choice
// of stream is made here.
func (r *Reporter) emit(e printers.LoopEvent, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Time = r.now().UTC().Format(time.RFC3339)
	w := r.out
	if !r.json && (e.Type == "error" || (e.Type == "reconnect" && strings.HasPrefix(e.Message, "lost"))) {
		w = r.errOut
	}
	io.WriteString(w, printers.LoopLine(e, text, r.json))
}

// Notice prints a one-off remark, about a Service or the whole run.
func (r *Reporter) Notice(service, msg string) {
	r.emit(printers.LoopEvent{Type: "notice", Service: service, Message: msg}, printers.LoopNotice(service, msg))
}

// Write reports the writes of one sync and the Pod changes behind them;
// restored names the slices it put back after another writer's edit.
func (r *Reporter) Write(service string, plan *reconcile.Plan, res apply.Result, restored map[string]bool) {
	r.count(res)
	reasons := printers.Shorten(printers.Changes(plan, restored), 50) // a first sync of 20,000 Pods is one line, not 20,000 reasons
	r.mu.Lock()
	delete(r.lastErr, service)
	r.mu.Unlock()
	e := printers.LoopEvent{Type: "write", Service: service, Created: len(res.Created), Updated: len(res.Updated), Deleted: len(res.Deleted), Reasons: reasons}
	r.emit(e, printers.LoopWrite(service, res, reasons))
}

// Removed reports the slices deleted for a Service that is gone.
func (r *Reporter) Removed(service string, res apply.Result) {
	r.count(res)
	r.emit(printers.LoopEvent{Type: "write", Service: service, Deleted: len(res.Deleted), Reasons: []string{"service deleted"}},
		printers.LoopRemoved(service, res))
}

func (r *Reporter) count(res apply.Result) {
	r.writes.Add(int64(res.Writes()))
	r.created.Add(int64(len(res.Created)))
	r.updated.Add(int64(len(res.Updated)))
	r.deleted.Add(int64(len(res.Deleted)))
}

// Recovered forgets a Service's last error after a sync that succeeded,
// written or not (a standby's is mostly held), or removed it: the same
// error later is news, and a Service gone keeps no message.
func (r *Reporter) Recovered(service string) {
	r.mu.Lock()
	delete(r.lastErr, service)
	r.mu.Unlock()
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
		r.emit(printers.LoopEvent{Type: "error", Service: service, Message: msg}, printers.LoopError(service, msg))
	}
}

// Summary prints the running totals.
func (r *Reporter) Summary(queue int) {
	e := printers.LoopEvent{Type: "summary", Syncs: r.syncs.Load(), Writes: r.writes.Load(), Errors: r.errors.Load(), Stale: r.stale.Load(), Queue: queue,
		Created: int(r.created.Load()), Updated: int(r.updated.Load()), Deleted: int(r.deleted.Load())}
	r.emit(e, printers.LoopSummary(e))
}

// EndpointsWrite reports a write of a Service's legacy Endpoints object
// (sync --watch --with-endpoints): "created", "updated" or "deleted".
func (r *Reporter) EndpointsWrite(service, verb, detail string) {
	r.writes.Add(1)
	r.emit(printers.LoopEvent{Type: "endpoints", Service: service, Message: verb + ": " + detail}, printers.LoopEndpoints(service, verb, detail))
}
