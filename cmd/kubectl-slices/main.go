// Command kubectl-slices is the kubectl plugin `kubectl slices`.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-slices/kubectl-slices/pkg/cmd"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

func main() {
	tuneGC()
	ctx, stop := notifyContext()
	root := cmd.NewRootCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	err := root.ExecuteContext(ctx)
	stop()
	err = exit.InterruptWins(ctx, err)
	var ie *exit.InterruptedError
	if err != nil {
		if errors.As(err, &ie) {
			fmt.Fprintln(os.Stderr, ie.Error())
		} else if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "error: "+msg)
		}
		os.Exit(exit.Code(err))
	}
}

// notifyContext is cancelled by the first SIGINT or SIGTERM, with the
// signal as its cause; every request follows it. A second signal exits at
// once, for when stopping cleanly takes too long.
func notifyContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		var first *exit.InterruptedError
		for {
			select {
			case s := <-sigs:
				ie := &exit.InterruptedError{Signal: s.(syscall.Signal)}
				if first != nil {
					fmt.Fprintln(os.Stderr, "interrupted again: exiting now")
					os.Exit(first.Code())
				}
				first = ie
				cancel(ie)
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
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
