package daemon

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// failing answers its first fails requests with an error, then 200.
type failing struct {
	fails, calls int
}

func (f *failing) RoundTrip(*http.Request) (*http.Response, error) {
	f.calls++
	if f.calls <= f.fails {
		return nil, errors.New("connect: connection refused")
	}
	return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
}

// A read waits for the API server, its retries growing to patientMax
// apart; a write fails at once.
func TestPatientReadsRetryReadsOnly(t *testing.T) {
	var waits []time.Duration
	sleep := func(_ *http.Request, d time.Duration) bool { waits = append(waits, d); return true }
	next := &failing{fails: 8}
	rt := patient{next: next, sleep: sleep}
	req, _ := http.NewRequest(http.MethodGet, "https://api/api/v1/pods?watch=true", nil)
	resp, err := rt.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("read after 8 failures: %v", err)
	}
	if next.calls != 9 || len(waits) != 8 {
		t.Fatalf("%d calls and %d waits, want 9 and 8", next.calls, len(waits))
	}
	for i, d := range waits {
		ceiling := min(patientFirst<<i, patientMax)
		if d < ceiling/2 || d > ceiling {
			t.Errorf("wait %d is %v, want within [%v, %v]", i, d, ceiling/2, ceiling)
		}
	}

	next = &failing{fails: 1}
	rt.next = next
	req, _ = http.NewRequest(http.MethodPost, "https://api/api/v1/namespaces/ns/events", nil)
	if _, err := rt.RoundTrip(req); err == nil || next.calls != 1 {
		t.Fatalf("a write was retried: %d calls, error %v", next.calls, err)
	}
}

// A read whose context ends stops waiting, with the last error.
func TestPatientReadsStopWithTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	next := &failing{fails: 1 << 30}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://api/version", nil)
	start := time.Now()
	_, err := PatientReads(next).RoundTrip(req)
	if err == nil {
		t.Fatal("no error")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("stopped %v after the start, the context lasted 300ms", took)
	}
}
