package controller

import (
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// catchUpMax bounds how long writes wait, after the API server answers
// again, for the caches to catch up (catchUp).
const catchUpMax = 3 * time.Second

// catchUpPoll is how soon a Service held by catchUp is looked at again.
const catchUpPoll = 100 * time.Millisecond

// catchUpQuiet is how long the caches must be without an event, once each
// has heard from the API server, before writes go out: a relist hands its
// objects to the cache one at a time, in a burst far shorter than this.
const catchUpQuiet = 250 * time.Millisecond

// catchUp holds writes after a lost connection until the caches have heard
// from the API server again, so that the loop does not write what it
// planned from a cache that missed the outage. A Service whose sync failed
// while the API server could not be reached waits in the queue for its
// backoff (up to 30 s after a long outage): once the caches caught up, it
// is synced at once instead.
//
// A cache has caught up when its informer delivered an event after the
// reconnection: after an outage the reflector lists again, or resumes its
// watch, and either way hands every change it missed to the handlers; and
// the burst is over when no cache has had an event for catchUpQuiet (a
// relist is applied to the cache object by object: a sync in the middle of
// one would plan from Pods half old, half new). An empty cache, or one
// that stays silent (its watch resumed and nothing changed), is taken as
// current after catchUpMax, which also bounds a burst that never ends.
type catchUp struct {
	now func() time.Time

	infs map[string]cache.SharedIndexInformer

	mu      sync.Mutex
	since   time.Time            // the reconnection; zero when not catching up
	waitFor []string             // the informers that were not empty then
	heard   map[string]time.Time // the last event of each informer
	last    time.Time            // the last event of any informer
	failing map[string]bool      // Services whose last sync failed
}

// newCatchUp watches the informers, whose handlers it adds before they start.
func newCatchUp(infs map[string]cache.SharedIndexInformer, now func() time.Time) (*catchUp, error) {
	u := &catchUp{now: now, infs: infs, heard: map[string]time.Time{}, failing: map[string]bool{}}
	for name, inf := range infs {
		if _, err := inf.AddEventHandler(u.handler(name)); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// handler notes each event of the named informer.
func (u *catchUp) handler(name string) cache.ResourceEventHandlerFuncs {
	note := func() {
		t := u.now()
		u.mu.Lock()
		u.heard[name], u.last = t, t
		u.mu.Unlock()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { note() },
		UpdateFunc: func(any, any) { note() },
		DeleteFunc: func(any) { note() },
	}
}

// reconnected starts catching up. It runs on a request's goroutine: the
// stores are counted once here, not at every sync.
func (u *catchUp) reconnected() {
	var waitFor []string
	for name, inf := range u.infs {
		if len(inf.GetStore().ListKeys()) > 0 {
			waitFor = append(waitFor, name)
		}
	}
	t := u.now()
	u.mu.Lock()
	u.since, u.waitFor = t, waitFor
	u.mu.Unlock()
}

// synced notes a Service's sync outcome.
func (u *catchUp) synced(key string, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if ok {
		delete(u.failing, key)
	} else {
		u.failing[key] = true
	}
}

// pending reports whether writes must still wait; once they need not, it
// returns the Services that failed meanwhile (to be synced at once) and
// stops catching up.
func (u *catchUp) pending() (wait bool, retry []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.since.IsZero() {
		return false, nil
	}
	if now := u.now(); now.Sub(u.since) < catchUpMax {
		for _, name := range u.waitFor {
			if !u.heard[name].After(u.since) {
				return true, nil
			}
		}
		if now.Sub(u.last) < catchUpQuiet {
			return true, nil
		}
	}
	u.since = time.Time{}
	for k := range u.failing {
		retry = append(retry, k)
	}
	sort.Strings(retry)
	return false, retry
}
