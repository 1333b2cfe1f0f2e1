// Command kubectl-slices is the kubectl plugin `kubectl slices`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-slices/kubectl-slices/pkg/cmd"
)

func main() {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := cmd.NewRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "error: "+msg)
		}
		os.Exit(cmd.ExitCode(err))
	}
}

// tuneGC trades memory for CPU: a run decodes every Pod of a Service at once
// and exits, so collecting less often saves up to a fifth of the client's
// CPU on large Services, which on small machines competes with the API
// server. A soft limit keeps very large Services from growing unchecked.
// GOGC and GOMEMLIMIT still win when set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(2 << 30)
	}
}
