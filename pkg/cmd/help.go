package cmd

import (
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

var groupOf = map[string]int{"explain": 0, "diff": 0, "check": 0, "sync": 1, "release": 1, "prune": 1, "deploy": 2}

// setupHelp gives the command tree kubectl's help: long descriptions and
// examples normalised by kubectl's templates, command groups, each command's
// own flags under "Options:", and the global flags (connection flags, -v,
// --color, ...) listed once by `kubectl slices options` instead of under
// every command. It runs after every command is added, so commands and
// flags added later follow the same conventions without extra wiring.
func setupHelp(root *cobra.Command) {
	templates.NormalizeAll(root)
	h := kubectlHelp{root: root, groups: helpGroups(root)}
	root.SilenceUsage = true
	root.SetUsageFunc(h.usage)
	root.SetHelpFunc(h.help)
	if !root.Runnable() {
		// As kubectl: the bare command prints its help, which then also
		// shows the usage line and the pointer to "options".
		root.Run = func(c *cobra.Command, _ []string) { _ = c.Help() }
	}
}

// helpGroups puts the root's commands into commandGroups.
func helpGroups(root *cobra.Command) templates.CommandGroups {
	groups := make(templates.CommandGroups, len(commandGroups))
	copy(groups, commandGroups)
	for _, c := range root.Commands() {
		if i, ok := groupOf[c.Name()]; ok {
			groups[i].Commands = append(groups[i].Commands, c)
		}
	}
	return groups
}

// newOptionsCommand is kubectl's `options`: the flags every command accepts.
func newOptionsCommand(o *RootOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "options",
		Short: "Print the list of flags inherited by all commands",
		Long:  "Print the list of flags inherited by all commands: kubeconfig and connection flags, as kubectl's, and the plugin's own global flags.",
		Example: `  # Print flags inherited by all commands
  kubectl slices options`,
		Args: cobra.NoArgs,
		Run: func(c *cobra.Command, _ []string) {
			_ = c.Usage()
		},
	}
	// Usage goes to stderr by default; options is asked for, so stdout.
	cmd.SetOut(o.Out)
	cmd.SetErr(o.Out)
	cmd.SetUsageFunc(optionsUsage)
	// kubectl's options help template is empty; --help shows the list too.
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { _ = c.Usage() })
	return cmd
}
