package webhook

import (
	"slices"
	"sync"
	"time"
)

// maxSamples bounds the handling times kept for percentiles.
const maxSamples = 1 << 16

// Stats records how long admissions took to handle, for the summary a
// running webhook prints and the latency benchmark reads.
type Stats struct {
	mu     sync.Mutex
	n      map[string]int
	sample []time.Duration
}

// Observe is a Handler.Observe.
func (s *Stats) Observe(path string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		s.n = map[string]int{}
	}
	s.n[path]++
	if len(s.sample) < maxSamples {
		s.sample = append(s.sample, d)
	}
}

// Summary returns the admissions per path and the p50 and p99 handling
// times of the (first maxSamples) admissions.
func (s *Stats) Summary() (counts map[string]int, p50, p99 time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts = map[string]int{}
	for k, v := range s.n {
		counts[k] = v
	}
	d := slices.Clone(s.sample)
	slices.Sort(d)
	return counts, percentile(d, 0.50), percentile(d, 0.99)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p)
	return sorted[i]
}
