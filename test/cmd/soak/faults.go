package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// injector injects the faults, one at a time, and records them.
type injector struct {
	s    *soak
	mu   sync.Mutex
	done []faultRecord
	// current is the fault being injected, if any (for the progress line).
	current *faultRecord
}

// Faults are the faults injected so far, the one in progress included
// (without its recovery).
func (in *injector) Faults() []faultRecord {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := append([]faultRecord(nil), in.done...)
	if in.current != nil {
		out = append(out, *in.current)
	}
	return out
}

// run injects one fault every FaultEvery, in rotation, until ctx ends or
// no fault fits before end.
func (in *injector) run(ctx context.Context, start, end time.Time) {
	var prev time.Time
	for i := 0; ; i++ {
		kind, when, ok := nextFault(in.s.o, start, end, prev, i)
		if !ok {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(when)):
		}
		rec := faultRecord{Kind: kind, Start: time.Now()}
		in.mu.Lock()
		in.current = &rec
		in.mu.Unlock()
		// The fault runs to its recovery even when ctx ends meanwhile: a
		// controller manager left frozen or a proxy left cut would spoil
		// the final check.
		in.inject(context.WithoutCancel(ctx), &rec)
		if rec.Recovered.IsZero() {
			rec.Recovered = time.Now()
		}
		in.s.logf("fault %s%s: recovered after %s%s%s", rec.Kind, target(rec), rec.Recovered.Sub(rec.Start).Round(100*time.Millisecond),
			prefix("; ", rec.Detail), prefix("; error: ", rec.Err))
		in.mu.Lock()
		in.done = append(in.done, rec)
		in.current = nil
		in.mu.Unlock()
		prev = rec.Recovered
	}
}

func target(r faultRecord) string {
	if r.Target == "" {
		return ""
	}
	return " (replica " + r.Target + ")"
}

func prefix(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// inject applies one fault and waits for its recovery, bounded by the
// kind's longest.
func (in *injector) inject(ctx context.Context, rec *faultRecord) {
	s := in.s
	cp := s.cp
	ctx, cancel := context.WithTimeout(ctx, rec.Kind.longest(s.o)+30*time.Second)
	defer cancel()
	fail := func(err error) {
		if err != nil {
			rec.Err = err.Error()
		}
	}
	s.logf("fault %s: injecting", rec.Kind)
	switch rec.Kind {
	case faultKCMKill:
		rec.Detail = fmt.Sprintf("pid %d", cp.ControllerManagerPID())
		cp.KillControllerManager()
		sleep(ctx, s.o.Outage)
		fail(s.startControllerManager(ctx))
		rec.Recovered = time.Now()
	case faultKCMFreeze:
		rec.Detail = fmt.Sprintf("pid %d", cp.ControllerManagerPID())
		cp.FreezeControllerManager()
		sleep(ctx, s.o.Outage)
		cp.ThawControllerManager()
		rec.Recovered = time.Now()
	case faultAPIServerRestart:
		cp.StopAPIServer()
		sleep(ctx, pauseDown)
		fail(cp.StartAPIServer(ctx))
		rec.Recovered = time.Now()
	case faultEtcdRestart:
		cp.StopEtcd()
		sleep(ctx, pauseDown)
		fail(cp.StartEtcd(ctx))
		fail(s.waitAPI(ctx))
		rec.Recovered = time.Now()
	case faultLeaderBlackhole:
		r := s.leader()
		rec.Target = r.Name
		before := s.leaseHolder(ctx)
		r.proxy.Blackhole()
		var after string
		for ctx.Err() == nil {
			if after = s.leaseHolder(ctx); after != "" && after != before {
				break
			}
			sleep(ctx, 200*time.Millisecond)
		}
		r.proxy.Pass()
		rec.Recovered = time.Now()
		rec.Detail = fmt.Sprintf("Lease held by %s, then %s", before, after)
		if after == "" || after == before {
			rec.Err = "the other replica did not lead within the bound"
		}
	case faultConnReset:
		r := s.leader()
		rec.Target = r.Name
		rec.Detail = fmt.Sprintf("%d connections reset", r.proxy.Conns())
		r.proxy.Reset()
		rec.Recovered = time.Now()
	case faultDelay:
		r := s.leader()
		rec.Target = r.Name
		r.proxy.Delay(delayBy)
		sleep(ctx, delayFor)
		r.proxy.Pass()
		rec.Recovered = time.Now()
		rec.Detail = fmt.Sprintf("%s each way for %s", delayBy, delayFor)
	case faultWatchCut:
		r := s.leader()
		rec.Target = r.Name
		r.proxy.Blackhole()
		sleep(ctx, compactAfter)
		fail(cp.Compact(ctx))
		sleep(ctx, watchCutFor-compactAfter)
		r.proxy.Pass()
		rec.Recovered = time.Now()
		rec.Detail = fmt.Sprintf("cut for %s, etcd compacted %s in", watchCutFor, compactAfter)
	}
}

// leader is the replica whose identity last wrote the Lease (the audit
// log's word, not the replicas'); the first replica if none has.
func (s *soak) leader() *replica {
	evs, _ := s.audit()
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if e.Resource == "leases" && e.Name == leaseName && succeeded(e.Code) {
			for _, r := range s.replicas {
				if r.User == e.User {
					return r
				}
			}
		}
	}
	return s.replicas[0]
}

// leaseHolder is the Lease's holder identity, "" when unreadable.
func (s *soak) leaseHolder(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	l, err := s.cp.Admin.CoordinationV1().Leases(leaseNamespace).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitAPI waits until the API server answers a read, at most 90 s.
func (s *soak) waitAPI(ctx context.Context) error {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := s.cp.Admin.CoreV1().Namespaces().Get(c, leaseNamespace, metav1.GetOptions{})
		cancel()
		if err == nil {
			return nil
		}
		if !sleep(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
	}
	return fmt.Errorf("the API server did not answer within 90s")
}

// sleep waits d or until ctx ends; false if it ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
