package main

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// sampler lists every slice, Pod and Service every period, and feeds the
// tracker. It reads through its own client, straight to the API server:
// none of the faults of the replicas' proxies touch it.
type sampler struct {
	client kubernetes.Interface
	every  time.Duration

	mu      sync.Mutex
	tracker *tracker
	errors  int
	lastOK  time.Time
}

func newSampler(client kubernetes.Interface, every time.Duration) *sampler {
	return &sampler{client: client, every: every, tracker: newTracker()}
}

func (s *sampler) run(ctx context.Context) {
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for {
		s.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// once takes one snapshot: slices first, then Pods, then Services and
// namespaces (why: tracker.drops).
func (s *sampler) once(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	slicesAt := time.Now()
	sl, err := s.client.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
	if err != nil {
		s.failed()
		return
	}
	pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		s.failed()
		return
	}
	podsAt := time.Now()
	svcs, err := s.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		s.failed()
		return
	}
	nss, err := s.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		s.failed()
		return
	}
	terminating := map[string]bool{}
	for _, n := range nss.Items {
		if n.DeletionTimestamp != nil {
			terminating[n.Name] = true
		}
	}
	snap := buildSnapshot(slicesAt, podsAt, sl.Items, pods.Items, svcs.Items, terminating)
	s.mu.Lock()
	s.tracker.Observe(snap)
	s.lastOK = time.Now()
	s.mu.Unlock()
}

func (s *sampler) failed() {
	s.mu.Lock()
	s.errors++
	s.mu.Unlock()
}

// view runs f on the tracker, under the sampler's lock.
func (s *sampler) view(f func(t *tracker, errors int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.tracker, s.errors)
}

// waitCurrent waits until a sample shows every Service's controller
// slices current, at most limit.
func (s *sampler) waitCurrent(ctx context.Context, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s.once(ctx)
		ok := false
		s.view(func(t *tracker, _ int) {
			if n := len(t.Counts); n > 0 {
				c := t.Counts[n-1]
				ok = c.Services > 0 && c.Behind == 0 && c.At.After(deadline.Add(-limit))
			}
		})
		if ok {
			return true
		}
		time.Sleep(s.every)
	}
	return false
}
