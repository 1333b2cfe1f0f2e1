package cmd

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
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
	var f *os.File
	pre := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		switch kind {
		case "none":
		case "cpu", "heap":
			var err error
			if f, err = os.Create(output); err != nil {
				return err
			}
			if kind == "cpu" {
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--profile: %w", err)
				}
			}
		default:
			return exit.Usagef("--profile must be none, cpu or heap")
		}
		return pre(c, args)
	}
	cmd.PersistentPostRun = func(*cobra.Command, []string) {
		if f == nil {
			return
		}
		if kind == "cpu" {
			pprof.StopCPUProfile()
		} else {
			runtime.GC()
			_ = pprof.Lookup("heap").WriteTo(f, 0)
		}
		f.Close()
	}
}
