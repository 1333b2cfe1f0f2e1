package printers

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

// LoopEvent is one line of `sync --watch -o json` output.
type LoopEvent struct {
	Time    string   `json:"time"`
	Type    string   `json:"type"` // write, notice, error, reconnect, summary, endpoints
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

// LoopLine renders one line of the loop's output, newline included: the
// event as a JSON object, or its time and text.
func LoopLine(e LoopEvent, text string, asJSON bool) string {
	if asJSON {
		b, _ := json.Marshal(e)
		return string(b) + "\n"
	}
	return e.Time + " " + text + "\n"
}

// LoopNotice is a one-off remark, about a Service or the whole run.
func LoopNotice(service, msg string) string {
	if service == "" {
		return msg
	}
	return "service " + service + ": " + msg
}

// LoopWrite is the line of one sync's writes and why they happened; a long
// list of reasons is cut to its first five.
func LoopWrite(service string, res outcome.Result, reasons []string) string {
	return fmt.Sprintf("service %s: %s: %s", service, sliceCounts(res), strings.Join(Shorten(reasons, 5), ", "))
}

// LoopRemoved is the line of the slices deleted for a Service that is gone.
func LoopRemoved(service string, res outcome.Result) string {
	return fmt.Sprintf("service %s: %s: service deleted", service, sliceCounts(res))
}

// LoopError is the line of a failed sync, which the loop retries.
func LoopError(service, msg string) string {
	return "error: service " + service + ": " + msg + " (retrying with backoff)"
}

// LoopSummary is the line of the running totals in e.
func LoopSummary(e LoopEvent) string {
	return fmt.Sprintf("summary: %d syncs, %d writes (%d created, %d updated, %d deleted), %d failed syncs, %d waits for the cache, %d Services queued",
		e.Syncs, e.Writes, e.Created, e.Updated, e.Deleted, e.Errors, e.Stale, e.Queue)
}

// LoopLost is the line of the first failed request of an outage.
func LoopLost(err string) string {
	return "lost the connection to the API server (" + err + "); retrying"
}

// LoopReconnected is the line of the first success after an outage of d.
func LoopReconnected(d time.Duration) string {
	return "reconnected to the API server after " + d.String() + "; the caches catch up by relisting"
}

// LoopEndpoints is the line of a write of a Service's legacy Endpoints
// object (sync --watch --with-endpoints): verb is "created", "updated" or
// "deleted", detail what it holds, if anything.
func LoopEndpoints(service, verb, detail string) string {
	text := fmt.Sprintf("endpoints %s: %s", service, verb)
	if detail != "" {
		text += ": " + detail
	}
	return text
}

// sliceCounts says how many slices a write created, updated and deleted,
// naming only the verbs that happened.
func sliceCounts(res outcome.Result) string {
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

// Shorten keeps the first n of s and says how many more there were.
func Shorten(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("and %d more", len(s)-n))
}
