package help

import (
	"io"

	"github.com/spf13/cobra"
	"k8s.io/kubectl/pkg/util/templates"
)

// commandGroups orders the root help as kubectl orders its own; a command not
// named here is listed under "Other Commands:" by kubectl's templater, so new
// commands show up without touching this list.
var commandGroups = templates.CommandGroups{
	{Message: "Troubleshooting Commands:", Commands: nil},
	{Message: "Repair Commands:", Commands: nil},
	{Message: "Deployment Commands:", Commands: nil},
}

var groupOf = map[string]int{"explain": 0, "diff": 0, "check": 0, "verify": 0, "sync": 1, "release": 1, "prune": 1, "deploy": 2}

// Groups puts the root's commands into the groups of the root help.
func Groups(root *cobra.Command) templates.CommandGroups {
	groups := make(templates.CommandGroups, len(commandGroups))
	copy(groups, commandGroups)
	for _, c := range root.Commands() {
		if i, ok := groupOf[c.Name()]; ok {
			groups[i].Commands = append(groups[i].Commands, c)
		}
	}
	return groups
}

// NewOptionsCommand is kubectl's `options`: the flags every command
// accepts, printed on out.
func NewOptionsCommand(out io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "options",
		Short:   "Print the list of flags inherited by all commands",
		Long:    "Print the list of flags inherited by all commands: kubeconfig and connection flags, as kubectl's, and the plugin's own global flags.",
		Example: Text("options.example"),
		Args:    cobra.NoArgs,
		Run: func(c *cobra.Command, _ []string) {
			_ = c.Usage()
		},
	}
	// Usage goes to stderr by default; options is asked for, so stdout.
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetUsageFunc(OptionsUsage)
	// kubectl's options help template is empty; --help shows the list too.
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { _ = c.Usage() })
	return cmd
}
