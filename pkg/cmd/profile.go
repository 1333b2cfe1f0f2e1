package cmd

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/profiling"
)

// addProfiling adds kubectl's hidden --profile flags, for performance work:
// a CPU profile of one run, or the live heap at its end (after a GC), which
// is what a long-running --watch keeps resident.
func addProfiling(cmd *cobra.Command) {
	var kind, output string
	pf := cmd.PersistentFlags()
	pf.StringVar(&kind, "profile", "none", "Profile to write: none, cpu or heap")
	pf.StringVar(&output, "profile-output", "cpu.pprof", "File for --profile")
	_ = pf.MarkHidden("profile")
	_ = pf.MarkHidden("profile-output")
	var stop func()
	pre := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if !slices.Contains(profiling.Kinds, kind) {
			return exit.Usagef("--profile must be none, cpu or heap")
		}
		var err error
		if stop, err = profiling.Start(c.Context(), kind, output); err != nil {
			return err
		}
		return pre(c, args)
	}
	cmd.PersistentPostRun = func(*cobra.Command, []string) {
		if stop != nil {
			stop()
		}
	}
}
