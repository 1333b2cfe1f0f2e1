package profiling

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// Kinds are the profiles Start writes; "none" writes nothing.
var Kinds = []string{"none", "cpu", "heap"}

// Start begins a profile of kind ("cpu" or "heap") into the file output,
// created now; stop ends it and closes the file. With "none", nothing is
// created and stop does nothing. An unknown kind is an error.
func Start(kind, output string) (stop func(), err error) {
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
	return func() {
		runtime.GC()
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}, nil
}
