package profiling

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

// Kinds are the profiles Start writes; "none" writes nothing.
var Kinds = []string{"none", "cpu", "heap"}

// Start begins a profile of kind ("cpu" or "heap") into the file output,
// created now; stop ends it and closes the file. With "none", nothing is
// created and stop does nothing. An unknown kind is an error. The heap is
// written once, when ctx ends or at stop, whichever comes first: a
// sync --watch stopped by a signal tears its caches down before stop, and
// its heap profile is meant to show what it held, not what is left.
func Start(ctx context.Context, kind, output string) (stop func(), err error) {
	switch kind {
	case "none":
		return func() {}, nil
	case "cpu", "heap":
	default:
		return nil, fmt.Errorf("unknown profile %q", kind)
	}
	f, err := os.Create(output)
	if err != nil {
		return nil, err
	}
	if kind == "cpu" {
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--profile: %w", err)
		}
		return func() { pprof.StopCPUProfile(); f.Close() }, nil
	}
	var once sync.Once
	write := func() {
		once.Do(func() {
			runtime.GC()
			_ = pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
		})
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			write()
		case <-done:
		}
	}()
	return func() { close(done); write() }, nil
}
