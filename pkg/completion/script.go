package completion

import (
	"io"

	"github.com/spf13/cobra"
)

// Shells are the shells Script writes completion code for.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// Script writes root's completion code for shell (one of Shells), with
// descriptions where the shell shows them.
func Script(w io.Writer, root *cobra.Command, shell string) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, true)
	case "zsh":
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, true)
	default:
		return root.GenPowerShellCompletionWithDesc(w)
	}
}
