package apply

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	discoveryclient "k8s.io/client-go/kubernetes/typed/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// DryRun says whether and where writes are simulated.
type DryRun string

const (
	DryRunNone   DryRun = "none"
	DryRunClient DryRun = "client" // nothing is sent
	DryRunServer DryRun = "server" // every write is sent with dryRun=All
)

// Options tune Apply.
type Options struct {
	ManagedBy    string
	FieldManager string
	DryRun       DryRun
	// Workers bounds the writes in flight within one phase.
	Workers int
}

// ErrConflict means a slice changed since it was read: re-read and re-plan.
var ErrConflict = errors.New("an EndpointSlice changed while syncing")

// Result lists what was written, as returned by the API server (or, for a
// client dry run, as it would have been sent).
type Result struct {
	Created, Updated, Deleted []*discovery.EndpointSlice
}

// Writes counts the objects written.
func (r Result) Writes() int { return len(r.Created) + len(r.Updated) + len(r.Deleted) }

// Apply writes a plan through client. Phases run in upstream's order; the
// first failing phase stops the later ones, as upstream's finalize does.
func Apply(ctx context.Context, client discoveryclient.EndpointSliceInterface, plan *reconcile.Plan, opts Options) (Result, error) {
	if opts.Workers < 1 {
		opts.Workers = 1
	}
	var res Result
	for _, s := range append(append(append([]*discovery.EndpointSlice(nil), plan.Create...), plan.Update...), plan.Delete...) {
		if got := s.Labels[discovery.LabelManagedBy]; got != opts.ManagedBy {
			return res, fmt.Errorf("refusing to write EndpointSlice %s/%s: managed by %q, not %q", s.Namespace, nameOf(s), got, opts.ManagedBy)
		}
	}
	if opts.DryRun == DryRunClient {
		return Result{Created: plan.Create, Updated: plan.Update, Deleted: plan.Delete}, nil
	}
	var dryRun []string
	if opts.DryRun == DryRunServer {
		dryRun = []string{metav1.DryRunAll}
	}
	var err error
	if res.Created, err = each(ctx, plan.Create, opts.Workers, func(s *discovery.EndpointSlice) (*discovery.EndpointSlice, error) {
		return client.Create(ctx, s, metav1.CreateOptions{DryRun: dryRun, FieldManager: opts.FieldManager})
	}); err != nil {
		return res, explain("create", err)
	}
	if res.Updated, err = each(ctx, plan.Update, opts.Workers, func(s *discovery.EndpointSlice) (*discovery.EndpointSlice, error) {
		return client.Update(ctx, s, metav1.UpdateOptions{DryRun: dryRun, FieldManager: opts.FieldManager})
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
		err := client.Delete(ctx, s.Name, metav1.DeleteOptions{DryRun: dryRun, Preconditions: pre})
		if apierrors.IsNotFound(err) {
			return s, nil // already gone: the goal is met
		}
		return s, err
	}); err != nil {
		return res, explain("delete", err)
	}
	return res, nil
}

// each runs fn over items with bounded parallelism and returns the results
// in item order; it stops starting work after the first error.
func each(ctx context.Context, items []*discovery.EndpointSlice, workers int, fn func(*discovery.EndpointSlice) (*discovery.EndpointSlice, error)) ([]*discovery.EndpointSlice, error) {
	out := make([]*discovery.EndpointSlice, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := false
	sem := make(chan struct{}, workers)
	for i, s := range items {
		mu.Lock()
		stop := failed
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			got, err := fn(s)
			out[i], errs[i] = got, err
			if err != nil {
				mu.Lock()
				failed = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var done []*discovery.EndpointSlice
	for i := range items {
		if errs[i] != nil {
			return done, errs[i]
		}
		if out[i] != nil {
			done = append(done, out[i])
		}
	}
	if err := ctx.Err(); err != nil {
		return done, err
	}
	return done, nil
}

// explain wraps API errors so callers can classify them.
func explain(verb string, err error) error {
	switch {
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

func nameOf(s *discovery.EndpointSlice) string {
	if s.Name != "" {
		return s.Name
	}
	return s.GenerateName + "<new>"
}
