package outcome

import (
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// DryRun says whether and where writes are simulated.
type DryRun string

const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client" // nothing is sent
	DryRunServer DryRun = "server" // every write is sent with dryRun=All
)

// Result lists what was written, as returned by the API server (or, for a
// client dry run, as it would have been sent).
type Result struct {
	Created, Updated, Deleted []*discovery.EndpointSlice
}

// Writes counts the objects written.
func (r Result) Writes() int { return len(r.Created) + len(r.Updated) + len(r.Deleted) }

// Add appends another attempt's writes, so a caller that re-plans after a
// conflict reports everything that happened, not only the last attempt.
func (r *Result) Add(o Result) {
	r.Created = append(r.Created, o.Created...)
	r.Updated = append(r.Updated, o.Updated...)
	r.Deleted = append(r.Deleted, o.Deleted...)
}

// Outcome is what happened to one Service.
type Outcome struct {
	// Namespace and Name say which Service, also when it was not found.
	Namespace, Name string
	// Service is the Service as last read.
	Service *corev1.Service
	// Plan is the last plan made; nil when none could be made.
	Plan *reconcile.Plan
	// Result holds every write of every attempt, also when Err is set.
	Result Result
	// Input is what the last plan was made from.
	Input    reconcile.Input
	Attempts int
	Err      error
	// Held is Options.Hold's reason for writing nothing.
	Held string
	// Incremental: the last attempt took Options.Incremental's path (its
	// plan, or its error; Input then holds the Service and its slices only).
	Incremental bool
}

// EndpointsOutcome is what happened to one Service's legacy v1 Endpoints
// object.
type EndpointsOutcome struct {
	Plan    *endpoints.Plan
	Written *corev1.Endpoints
	Err     error
}
