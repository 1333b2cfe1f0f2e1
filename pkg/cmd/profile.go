package cmd

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// addProfiling adds kubectl's hidden --profile flags: a CPU profile of one
// run, for performance work.
func addProfiling(cmd *cobra.Command) {
	var kind, output string
	pf := cmd.PersistentFlags()
	pf.StringVar(&kind, "profile", "none", "Profile to write: none or cpu")
	pf.StringVar(&output, "profile-output", "cpu.pprof", "File for --profile")
	_ = pf.MarkHidden("profile")
	_ = pf.MarkHidden("profile-output")
	var f *os.File
	pre := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if kind == "cpu" {
			var err error
			if f, err = os.Create(output); err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return fmt.Errorf("--profile: %w", err)
			}
		}
		return pre(c, args)
	}
	cmd.PersistentPostRun = func(*cobra.Command, []string) {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
	}
}
