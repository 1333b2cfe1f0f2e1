package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	o, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if os.Getenv("KUBECTL_SLICES_BIN_DIR") == "" {
		fmt.Fprintln(os.Stderr, "soak: KUBECTL_SLICES_BIN_DIR is not set; run `make soak` (it builds the control plane)")
		os.Exit(2)
	}
	out := o.Out
	if out == "" {
		if out, err = os.MkdirTemp("", "kubectl-slices-soak-"); err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(2)
		}
	} else if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	fmt.Printf("soak: outputs in %s\n", out)
	log, err := os.Create(out + "/soak.log")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	s := &soak{o: o, out: out, log: log}
	code := s.run(ctx)
	stop()
	log.Close()
	os.Exit(code)
}
