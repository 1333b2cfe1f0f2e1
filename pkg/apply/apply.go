package apply

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// DryRun says whether and where writes are simulated (outcome.DryRun,
// so printers can name it without importing the writer).
type DryRun = outcome.DryRun

const (
	DryRunNone   = outcome.DryRunNone
	DryRunClient = outcome.DryRunClient
	DryRunServer = outcome.DryRunServer
)

// Options tune Apply.
type Options struct {
	ManagedBy string
	// FieldManager is recorded on every write (FieldManager by default).
	FieldManager string
	DryRun       DryRun
	// Workers bounds the writes in flight within one phase.
	Workers int
	// Grace is how long writes already sent may take to finish once ctx is
	// done. No write starts after ctx is done, but one on the wire may have
	// been made by the server whatever the client does: waiting for its
	// answer is the only way to report it. 0 cuts writes in flight at once
	// (their outcome is then unknown and they are not reported).
	Grace time.Duration
	// Abort, when not nil and done, cuts writes in flight at once, grace or
	// not (a lost lease: another replica writes now).
	Abort context.Context
}

// FieldManager is the field manager of kubectl-slices' own writes, the
// trace by which a slice under a shared managed-by value is known as ours.
const FieldManager = "kubectl-slices"

// DefaultWorkers is the writes in flight of commands that offer no flag
// for it (release, prune); sync's --write-concurrency sets its own.
const DefaultWorkers = 16

// DefaultGrace is how long writes in flight may finish after a signal
// (sync --shutdown-grace): well inside the 5 s a stop is promised in, and
// long enough for a write the API server has taken to be answered.
const DefaultGrace = 3 * time.Second

// ErrConflict means a slice changed or vanished since it was read: re-read
// and re-plan. It carries its class, so that one the retries could not
// absorb exits as a conflict without pkg/exit knowing this package.
var ErrConflict = exit.WithClass(exit.ClassConflict, errors.New("an EndpointSlice changed while syncing"))

// Result lists what was written (outcome.Result).
type Result = outcome.Result

// Apply writes a plan through client. Phases run in upstream's order; a
// failing phase stops the later ones, as upstream's finalize does. Within a
// phase a failure stops starting new writes but lets those in flight finish;
// every write that succeeded is in the Result, also when err is not nil.
// Once ctx is done no write starts; those in flight get opts.Grace to finish
// and are reported when they did.
func Apply(ctx context.Context, client discoveryclient.EndpointSliceInterface, plan *reconcile.Plan, opts Options) (Result, error) {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	var res Result
	if err := checkOurs(plan, opts.ManagedBy); err != nil {
		return res, err
	}
	if opts.DryRun == DryRunClient {
		return Result{Created: plan.Create, Updated: plan.Update, Deleted: plan.Delete}, nil
	}
	var dryRun []string
	if opts.DryRun == DryRunServer {
		dryRun = []string{metav1.DryRunAll}
	}
	// Requests run on wctx, which outlives ctx by opts.Grace; ctx decides
	// whether a write starts.
	wctx, cancel := graceful(ctx, opts.Grace)
	defer cancel()
	if opts.Abort != nil {
		var stop func()
		wctx, stop = cutOn(wctx, opts.Abort)
		defer stop()
	}
	var err error
	if res.Created, err = each(ctx, plan.Create, opts.Workers, func(s *discovery.EndpointSlice) (*discovery.EndpointSlice, error) {
		return client.Create(wctx, s, metav1.CreateOptions{DryRun: dryRun, FieldManager: opts.FieldManager})
	}); err != nil {
		return res, explain("create", err)
	}
	if res.Updated, err = each(ctx, plan.Update, opts.Workers, func(s *discovery.EndpointSlice) (*discovery.EndpointSlice, error) {
		got, err := client.Update(wctx, s, metav1.UpdateOptions{DryRun: dryRun, FieldManager: opts.FieldManager})
		if apierrors.IsNotFound(err) {
			// Deleted since it was read (by hand, or by the garbage
			// collector racing a Service re-create): the plan is stale.
			return nil, fmt.Errorf("%w: EndpointSlice %s/%s was deleted meanwhile", ErrConflict, s.Namespace, s.Name)
		}
		return got, err
	}); err != nil {
		return res, explain("update", err)
	}
	if res.Deleted, err = each(ctx, plan.Delete, opts.Workers, func(s *discovery.EndpointSlice) (*discovery.EndpointSlice, error) {
		rv, uid := s.ResourceVersion, s.UID
		pre := &metav1.Preconditions{}
		if rv != "" {
			pre.ResourceVersion = &rv
		}
		if uid != "" {
			pre.UID = &uid
		}
		err := client.Delete(wctx, s.Name, metav1.DeleteOptions{DryRun: dryRun, Preconditions: pre})
		if apierrors.IsNotFound(err) {
			return nil, nil // already gone: the goal is met, but we wrote nothing
		}
		return s, err
	}); err != nil {
		return res, explain("delete", err)
	}
	return res, nil
}

// checkOurs refuses a plan that writes a slice not labelled with managedBy.
// A delete may also name a slice of another value the run writes
// (reconcile.OurValues): under a controller's value, a Service that gained a
// selector loses its mirrored slices with the EndpointSlice controller's
// plan, as the mirroring controller deletes them.
func checkOurs(plan *reconcile.Plan, managedBy string) error {
	for _, s := range append(append([]*discovery.EndpointSlice(nil), plan.Create...), plan.Update...) {
		if got := s.Labels[discovery.LabelManagedBy]; got != managedBy {
			return fmt.Errorf("refusing to write EndpointSlice %s/%s: managed by %q, not %q", s.Namespace, nameOf(s), got, managedBy)
		}
	}
	for _, s := range plan.Delete {
		if got := s.Labels[discovery.LabelManagedBy]; !reconcile.IsOurs(got, managedBy) {
			return fmt.Errorf("refusing to delete EndpointSlice %s/%s: managed by %q, not %q", s.Namespace, nameOf(s), got, managedBy)
		}
	}
	return nil
}

// each runs fn over items with at most workers in flight. After the first
// failure, or once ctx is done, no new write starts; writes in flight finish. It returns every
// object fn wrote (in item order) and the first error in item order.
func each(ctx context.Context, items []*discovery.EndpointSlice, workers int, fn func(*discovery.EndpointSlice) (*discovery.EndpointSlice, error)) ([]*discovery.EndpointSlice, error) {
	out := make([]*discovery.EndpointSlice, len(items))
	errs := make([]error, len(items))
	ran := make([]bool, len(items))
	var failed atomic.Bool
	var g errgroup.Group
	g.SetLimit(workers)
	for i, s := range items {
		if failed.Load() || ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if failed.Load() || ctx.Err() != nil {
				return nil
			}
			ran[i] = true
			out[i], errs[i] = fn(s)
			if errs[i] != nil {
				failed.Store(true)
			}
			return nil
		})
	}
	_ = g.Wait()
	var done []*discovery.EndpointSlice
	var first error
	skipped := false
	for i := range items {
		if errs[i] != nil && first == nil {
			first = errs[i]
		}
		skipped = skipped || !ran[i]
		if out[i] != nil && errs[i] == nil {
			done = append(done, out[i])
		}
	}
	if first == nil && skipped {
		first = ctx.Err() // stopped before every write was made
	}
	return done, first
}

// graceful is a context for requests that carries ctx's values and ends
// grace after ctx ends (at once when grace is 0), with ctx's cause.
func graceful(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	if grace <= 0 {
		return ctx, func() {}
	}
	wctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancel(context.Cause(ctx))
		case <-done:
		}
	})
	return wctx, func() {
		stop()
		close(done)
		cancel(nil)
	}
}

// cutOn ends ctx as soon as abort is done.
func cutOn(ctx, abort context.Context) (context.Context, func()) {
	cctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(abort, func() { cancel(context.Cause(abort)) })
	return cctx, func() {
		stop()
		cancel(nil)
	}
}

// explain wraps API errors so callers can classify them.
func explain(verb string, err error) error {
	switch {
	case errors.Is(err, ErrConflict):
		return err
	case apierrors.IsConflict(err):
		return fmt.Errorf("%w: %v", ErrConflict, err)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return &NamespaceTerminatingError{Err: err}
	}
	return fmt.Errorf("%s endpointslices: %w", verb, err)
}

// NamespaceTerminatingError: slices cannot be created in a namespace that is
// being deleted.
type NamespaceTerminatingError struct{ Err error }

func (e *NamespaceTerminatingError) Error() string { return e.Err.Error() }
func (e *NamespaceTerminatingError) Unwrap() error { return e.Err }

// ExitClass tells pkg/exit to word it as the namespace going away, not as
// the API server failing.
func (e *NamespaceTerminatingError) ExitClass() exit.Class { return exit.ClassNamespaceTerminating }

func nameOf(s *discovery.EndpointSlice) string {
	if s.Name != "" {
		return s.Name
	}
	return s.GenerateName + "<new>"
}
