package cluster

import (
	"context"
	"net/http"
	"sync/atomic"

	flowcontrolapi "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
)

// fairnessLimiter is the client's default rate limiter: a token bucket
// until the API server shows, on any response, that API Priority and
// Fairness classified the request; from then on nothing. Every API server
// since 1.20 applies it unless turned off; it queues and sheds by load, so
// a client-side bucket only slows a repair: at 100,000 Pods the bucket at
// 200 requests a second paced a cold `sync --all -A`'s 5,000 creates to
// 29.5 s, unlimited it took 11.8 s (make bench-envelope). Our concurrency
// stays bounded (Services synced at once, writes per Service), and
// client-go still honours the server's 429 and Retry-After. flux and
// cert-manager lift their limits the same way; a --qps or --burst the user
// gives is kept as given (NewLimiter is then not used).
type fairnessLimiter struct {
	bucket flowcontrol.RateLimiter
	lifted atomic.Bool
}

func (l *fairnessLimiter) TryAccept() bool { return l.lifted.Load() || l.bucket.TryAccept() }
func (l *fairnessLimiter) Stop()           { l.bucket.Stop() }

func (l *fairnessLimiter) QPS() float32 {
	if l.lifted.Load() {
		return 0
	}
	return l.bucket.QPS()
}

func (l *fairnessLimiter) Accept() {
	if !l.lifted.Load() {
		l.bucket.Accept()
	}
}

func (l *fairnessLimiter) Wait(ctx context.Context) error {
	if l.lifted.Load() {
		return nil
	}
	return l.bucket.Wait(ctx)
}

// observe lifts the limit once a response names the FlowSchema the API
// server matched.
func (l *fairnessLimiter) observe(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if resp != nil && !l.lifted.Load() && resp.Header.Get(flowcontrolapi.ResponseHeaderMatchedFlowSchemaUID) != "" &&
			l.lifted.CompareAndSwap(false, true) {
			klog.V(1).InfoS("the API server applies API Priority and Fairness: client-side rate limits lifted", "flowSchema", resp.Header.Get(flowcontrolapi.ResponseHeaderMatchedFlowSchemaUID))
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
