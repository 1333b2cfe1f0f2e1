package daemon

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/progress"
)

// firstPass follows the loop's first pass over its Services, drawing it on
// bar (nil: draws nothing): once the caches are filled every selected
// Service is queued, and each one synced leaves the queue, so the Services
// done are those selected less those still queued. It returns when the queue first runs empty (the pass is
// done; later events are the loop's ordinary work) or ctx is done. Empty
// means empty at two polls in a row: the informers' handlers may queue
// the first Services a moment after the caches say they are filled.
func firstPass(ctx context.Context, bar *progress.Bar, c *cluster.Cache, opts controller.Options, queued func() int) {
	total := 0
	for _, obj := range c.Services.List() {
		if svc, ok := obj.(*corev1.Service); ok && selected(opts, svc) {
			total++
		}
	}
	bar.Begin(total)
	defer bar.Done()
	tick := time.NewTicker(progress.Interval)
	defer tick.Stop()
	done, empty, seen := 0, 0, false
	for {
		left := queued()
		seen = seen || left > 0
		if left == 0 {
			empty++
		} else {
			empty = 0
		}
		if seen || empty == 2 {
			// Events may queue a Service again: the count never goes back.
			done = max(done, total-left)
			bar.Set(done)
		}
		if empty == 2 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// selected is the loop's choice of Services (controller.Options): the
// keys named, else those matching the selector.
func selected(opts controller.Options, svc *corev1.Service) bool {
	if len(opts.Names) > 0 {
		return opts.Names[svc.Namespace+"/"+svc.Name]
	}
	return opts.Selector == nil || opts.Selector.Matches(labels.Set(svc.Labels))
}
