package daemon

import (
	"math/rand/v2"
	"net/http"
	"time"
)

// Reads that cannot reach the API server are retried here, between
// patientFirst and patientMax apart, for as long as their context lasts.
const (
	patientFirst = 100 * time.Millisecond
	patientMax   = time.Second
)

// PatientReads is a transport wrapper for the long-running commands: a
// read (GET, the informers' lists and watches among them) that gets no
// answer from the API server (refused, reset, a dead connection) is sent
// again, at most patientMax apart, until one is answered or its context
// ends. Answers of any status pass through, as do writes, which are not
// safe to repeat here.
//
// Why: client-go's reflector backs off after each failed list or watch,
// doubling from 0.8 s to 30 s with jitter up to 60 s, and resets only after
// two quiet minutes. An informer that failed all through an outage of the
// API server therefore relisted 30 to 60 s after the server came back, and
// the loop wrote from caches that stale for that long (21 to 56 s measured
// after a 20 s outage). Here the reflector's request waits for the server
// instead of failing, so its backoff does not grow, and it relists within
// patientMax of the server answering again.
func PatientReads(next http.RoundTripper) http.RoundTripper {
	return patient{next: next, sleep: sleepCtx}
}

type patient struct {
	next  http.RoundTripper
	sleep func(req *http.Request, d time.Duration) bool
}

func (p patient) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return p.next.RoundTrip(req)
	}
	wait := patientFirst
	for {
		resp, err := p.next.RoundTrip(req)
		if err == nil || req.Context().Err() != nil {
			return resp, err
		}
		// Jitter spreads the informers' retries over the wait.
		d := wait/2 + rand.N(wait/2+1)
		if !p.sleep(req, d) {
			return resp, err
		}
		wait = min(2*wait, patientMax)
	}
}

// sleepCtx waits d unless the request's context ends first.
func sleepCtx(req *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-req.Context().Done():
		return false
	}
}
