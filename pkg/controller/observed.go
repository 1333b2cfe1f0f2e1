package controller

import (
	"sync"
	"time"
)

// observed keeps, per Service key, when the informers first delivered a
// change of the Service, its Pods, its Endpoints or their Nodes since the
// Service's last sync: in standby mode a difference is dated from it
// (pkg/standby, clock.go), by the loop's clock, never by a timestamp on the
// objects.
type observed struct {
	mu sync.Mutex
	at map[string]time.Time
}

func newObserved() *observed { return &observed{at: map[string]time.Time{}} }

// note keeps the earliest unsynced observation of key.
func (o *observed) note(key string, at time.Time) {
	if at.IsZero() {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.at[key]; !ok || at.Before(prev) {
		o.at[key] = at
	}
}

// take returns and forgets key's observation; zero when none.
func (o *observed) take(key string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	at := o.at[key]
	delete(o.at, key)
	return at
}

// forget drops a deleted Service's.
func (o *observed) forget(key string) {
	o.mu.Lock()
	delete(o.at, key)
	o.mu.Unlock()
}

// noteChange notes an informer event for key in standby mode once the
// replica leads (leading.go), at at (one
// time for every Service an event touches, so that their differences are
// dated alike and the controller's progress on one counts for the others).
func (c *Controller) noteChange(key string, at time.Time) {
	if c.opts.Standby != nil && c.leads.Load() {
		c.observed.note(key, at)
	}
}
