package cmd

import (
	"context"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/probe"
)

// VerifyWatchFlags are verify's --watch flags.
type VerifyWatchFlags struct {
	Watch      bool
	Interval   time.Duration
	HealthAddr string
}

func addVerifyWatchFlags(cmd *cobra.Command, w *VerifyWatchFlags) {
	f := cmd.Flags()
	f.BoolVarP(&w.Watch, "watch", "w", false, "Keep verifying until interrupted: every node and DNS replica every --interval, and --sync-period after the slices change (a line per change of status; metrics and Events with --health-addr)")
	f.DurationVar(&w.Interval, "interval", 5*time.Minute, "With --watch: the longest time between two rounds")
	f.StringVar(&w.HealthAddr, "health-addr", "", "With --watch: serve /healthz, /readyz and /metrics on HOST:PORT (e.g. :8080; empty: off)")
}

// validate checks the watch flags against the others; each refusal is a
// usage error.
func (w VerifyWatchFlags) validate(changed func(string) bool, output string, r probe.Run) error {
	if !w.Watch {
		for _, name := range []string{"interval", "health-addr"} {
			if changed(name) {
				return exit.Usagef("--%s is valid only with --watch", name)
			}
		}
		return nil
	}
	switch {
	case output != "":
		return exit.Usagef("-o is not valid with --watch: it prints a line per change of status (the statuses are served as metrics with --health-addr)")
	case changed("node"):
		return exit.Usagef("--node is not valid with --watch: the watch verifies every node")
	case r.Settle:
		return exit.Usagef("--settle is not valid with --watch: a change is verified --sync-period after it anyway")
	case w.Interval < r.SyncPeriod:
		return exit.Usagef("--interval (%s) must be at least --sync-period (%s)", w.Interval, r.SyncPeriod)
	}
	if w.HealthAddr != "" {
		if _, _, err := net.SplitHostPort(w.HealthAddr); err != nil {
			return exit.Usagef("--health-addr must be HOST:PORT (e.g. :8080): %v", err)
		}
	}
	return nil
}

// runWatch verifies the selected Services in rounds until ctx is done;
// the selection is kept as a filter (names in the namespace, -l by label,
// --all every Service, of every namespace with -A), as sync --watch keeps
// it.
func (o *VerifyOptions) runWatch(ctx context.Context) error {
	client, err := o.Clientset()
	if err != nil {
		return err
	}
	if err := o.connectProbe(client); err != nil {
		return err
	}
	// A signal ends it as it ends sync --watch, exit 0: the round in
	// flight is abandoned.
	err = daemon.RunVerify(ctx, daemon.VerifyConfig{Client: client, Run: o.Probe, Selection: o.Targets,
		Interval: o.Watch.Interval, HealthAddr: o.Watch.HealthAddr, Out: o.Out, ErrOut: o.ErrOut})
	return exit.Process(o.Targets.Namespace, o.Targets.Listed(), err)
}
