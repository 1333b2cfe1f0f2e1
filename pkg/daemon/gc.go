package daemon

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// QuietGCInterval is how often CollectWhenQuiet looks at the heap.
const QuietGCInterval = 15 * time.Second

// heapSample is what CollectWhenQuiet reads of the runtime.
type heapSample struct {
	cycles uint64 // garbage collections completed so far
	live   uint64 // bytes marked live by the last one
	heap   uint64 // bytes of heap objects now, live or garbage
}

func readHeap() heapSample {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return heapSample{cycles: s[0].Value.Uint64(), live: s[1].Value.Uint64(), heap: s[2].Value.Uint64()}
}

// quietGarbage: below this much garbage a collection is not worth its CPU.
const quietGarbage = 4 << 20

// shouldCollect: no collection ran between two looks (the process is
// quiet) and the heap holds more garbage than a collection's worth: a
// quarter of the live heap, so that under a light steady load (which the
// collector would serve at half, GOGC=50) a forced collection costs at
// most twice the CPU of a natural one.
func shouldCollect(prev, cur heapSample) bool {
	return cur.cycles == prev.cycles && cur.heap > cur.live+max(cur.live/4, quietGarbage)
}

// CollectWhenQuiet collects the garbage a quiet process would otherwise
// keep, and returns the freed memory to the OS, until ctx is done. The
// collector runs when the heap reaches its goal, which a long-running cache
// sets after filling: the decoded lists and the first syncs' plans are
// garbage by then, and with nothing more allocated the heap stays at that
// size for as long as the cluster is quiet (make bench-watch-idle: 20,000
// Pods cached, 51 MiB live, 118 MiB in use). It runs at most one
// collection per interval, and none while the collector runs by itself or
// nothing is allocated.
func CollectWhenQuiet(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	prev := readHeap()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := readHeap()
		if shouldCollect(prev, cur) {
			debug.FreeOSMemory()
			cur = readHeap()
		}
		prev = cur
	}
}
