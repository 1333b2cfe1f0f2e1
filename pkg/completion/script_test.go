package completion

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Each shell gets its own script, naming the command it completes.
func TestScript(t *testing.T) {
	root := &cobra.Command{Use: "kubectl-slices"}
	root.AddCommand(&cobra.Command{Use: "sync", Run: func(*cobra.Command, []string) {}})
	marks := map[string]string{"bash": "# bash completion V2 for kubectl-slices", "zsh": "#compdef kubectl-slices", "fish": "# fish completion for kubectl-slices", "powershell": "# powershell completion for kubectl-slices"}
	for _, shell := range Shells {
		var out bytes.Buffer
		if err := Script(&out, root, shell); err != nil || !strings.Contains(out.String(), marks[shell]) {
			t.Errorf("%s: %v; no %q in %.200q", shell, err, marks[shell], out.String())
		}
	}
}
