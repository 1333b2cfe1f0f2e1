package syncer

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The endpoints.kubernetes.io/last-change-trigger-time annotation tells
// kube-proxy when the change a slice reflects happened, for its
// network-programming-latency metric. Upstream's TriggerTimeTracker
// (k8s.io/endpointslice/util) takes the trigger times of the Service (its
// creation) and of its Pods (the Ready condition's last transition) and
// stamps the earliest of those that moved since its previous sync.

// LatestChange is the trigger time of a write with no history (a one-shot
// run, or the first sync of a Service by the watch loop): the latest change
// among the Service and its Pods that the write reflects, that is the
// Service's creation or a Pod's last Ready transition, whichever came last.
// Upstream stamps the Service's creation time on a first sync, which for a
// Service months old records months-old latency samples; the latest known
// change is the closest bound this run can honestly give. Zero, so no
// annotation, when nothing is known.
func LatestChange(svc *corev1.Service, pods []*corev1.Pod) time.Time {
	t := svc.CreationTimestamp.Time
	for _, p := range pods {
		if pt := podTriggerTime(p); pt.After(t) {
			t = pt
		}
	}
	return t
}

// podTriggerTime is upstream's getPodTriggerTime: the Ready condition's last
// transition, zero without one.
func podTriggerTime(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// Tracker is the watch loop's trigger-time tracker, kept per Service as
// upstream's: after the first sync of a Service it returns the earliest
// trigger time that changed since the previous sync, or zero when none did
// (a write caused by a hand edit of a slice, say, reflects no new change).
// Calls for one Service must not overlap; the workqueue guarantees that.
type Tracker struct {
	mu     sync.Mutex
	states map[string]trackState
}

type trackState struct {
	service time.Time
	pods    map[string]time.Time
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{states: map[string]trackState{}} }

// Compute records the trigger times of svc and pods and returns the one to
// stamp on this write.
func (t *Tracker) Compute(svc *corev1.Service, pods []*corev1.Pod) time.Time {
	key := svc.Namespace + "/" + svc.Name
	t.mu.Lock()
	prev, known := t.states[key]
	t.mu.Unlock()
	next := trackState{service: svc.CreationTimestamp.Time, pods: make(map[string]time.Time, len(pods))}
	var earliest time.Time
	for _, p := range pods {
		pt := podTriggerTime(p)
		if pt.IsZero() {
			continue
		}
		next.pods[p.Name] = pt
		if pt.After(prev.pods[p.Name]) {
			earliest = earlier(earliest, pt)
		}
	}
	if next.service.After(prev.service) {
		earliest = earlier(earliest, next.service)
	}
	t.mu.Lock()
	t.states[key] = next
	t.mu.Unlock()
	if !known {
		return LatestChange(svc, pods)
	}
	return earliest
}

// earlier is the earlier of two trigger times, zero standing for none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// Forget drops a deleted Service's state.
func (t *Tracker) Forget(namespace, name string) {
	t.mu.Lock()
	delete(t.states, namespace+"/"+name)
	t.mu.Unlock()
}

// Changed is Compute for a sync that knows which Pods changed since the
// previous one (the watch loop's incremental path): members holds each
// changed Pod the Service's selector matches now, and nil for one it no
// longer matches or that is gone; every other Pod is as it was. It returns
// the trigger time Compute would, and a commit that records the change
// once the plan is taken. known is false before the Service's first sync.
func (t *Tracker) Changed(svc *corev1.Service, members map[string]*corev1.Pod) (at time.Time, commit func(), known bool) {
	key := svc.Namespace + "/" + svc.Name
	t.mu.Lock()
	prev, known := t.states[key]
	t.mu.Unlock()
	if !known {
		return time.Time{}, nil, false
	}
	for name, p := range members {
		if p == nil {
			continue
		}
		if pt := podTriggerTime(p); !pt.IsZero() && pt.After(prev.pods[name]) {
			at = earlier(at, pt)
		}
	}
	if svc.CreationTimestamp.After(prev.service) {
		at = earlier(at, svc.CreationTimestamp.Time)
	}
	return at, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		st := t.states[key]
		st.service = svc.CreationTimestamp.Time
		for name, p := range members {
			var pt time.Time
			if p != nil {
				pt = podTriggerTime(p)
			}
			if pt.IsZero() {
				delete(st.pods, name)
			} else {
				st.pods[name] = pt
			}
		}
		t.states[key] = st
	}, true
}
