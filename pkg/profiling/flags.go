package profiling

import (
	"slices"
	"sync"

	"github.com/spf13/cobra"
)

// AddFlags adds kubectl's hidden --profile and --profile-output flags to
// cmd, for performance work, and profiles every run of its commands: the
// profile starts before cmd's PersistentPreRunE and is written when the
// command's RunE returns, error or not (cobra skips PersistentPostRun
// after an error, and a failing run is often the one to profile). bad
// words the error of a --profile value that is not a Kind.
func AddFlags(cmd *cobra.Command, bad func(msg string) error) {
	var kind, output string
	pf := cmd.PersistentFlags()
	pf.StringVar(&kind, "profile", "none", "Profile to write: none, cpu or heap")
	pf.StringVar(&output, "profile-output", "cpu.pprof", "File for --profile")
	_ = pf.MarkHidden("profile")
	_ = pf.MarkHidden("profile-output")
	var stop func()
	pre := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(c *cobra.Command, args []string) error {
		if !slices.Contains(Kinds, kind) {
			return bad("--profile must be none, cpu or heap")
		}
		var err error
		if stop, err = Start(c.Context(), kind, output); err != nil {
			return err
		}
		if run := c.RunE; run != nil && kind != "none" {
			// Once: a command object run again (tests do) keeps this
			// run's wrapper inside the next one's.
			finish := sync.OnceFunc(stop)
			c.RunE = func(c *cobra.Command, args []string) error {
				defer finish()
				return run(c, args)
			}
		}
		return pre(c, args)
	}
}
