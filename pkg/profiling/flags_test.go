package profiling

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// A run that fails writes its profile too, and a command object run again
// (as tests do) writes each run's profile once: the heap profile's stop
// closes a channel, and a second call would panic.
func TestFlagsWriteOnFailureAndOnEachRun(t *testing.T) {
	root := &cobra.Command{Use: "root", SilenceErrors: true, SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil }}
	fails := errors.New("it failed")
	root.AddCommand(&cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return fails }})
	AddFlags(root, func(msg string) error { return errors.New(msg) })
	dir := t.TempDir()
	for _, name := range []string{"first.pprof", "second.pprof"} {
		out := filepath.Join(dir, name)
		root.SetArgs([]string{"fail", "--profile=heap", "--profile-output=" + out})
		if err := root.Execute(); !errors.Is(err, fails) {
			t.Fatalf("%s: err %v, want the command's", name, err)
		}
		if b, err := os.ReadFile(out); err != nil || len(b) < 100 {
			t.Errorf("%s: %d bytes, %v: no heap profile after a failed run", name, len(b), err)
		}
	}
}
