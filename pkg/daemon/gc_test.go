package daemon

import "testing"

func TestShouldCollect(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name      string
		prev, cur heapSample
		want      bool
	}{
		{"quiet, startup garbage", heapSample{cycles: 38, live: 86 * mib}, heapSample{cycles: 38, live: 86 * mib, heap: 118 * mib}, true},
		{"collector ran since", heapSample{cycles: 38}, heapSample{cycles: 39, live: 50 * mib, heap: 118 * mib}, false},
		{"little garbage", heapSample{cycles: 39}, heapSample{cycles: 39, live: 50 * mib, heap: 62 * mib}, false},
		{"a quarter of the live heap", heapSample{cycles: 39}, heapSample{cycles: 39, live: 50 * mib, heap: 63 * mib}, true},
		{"small heap, under the floor", heapSample{cycles: 5}, heapSample{cycles: 5, live: 2 * mib, heap: 5 * mib}, false},
		{"small heap, past the floor", heapSample{cycles: 5}, heapSample{cycles: 5, live: 2 * mib, heap: 7 * mib}, true},
	} {
		if got := shouldCollect(c.prev, c.cur); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
