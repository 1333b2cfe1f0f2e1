package help

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/kubectl/pkg/util/templates"
	"k8s.io/kubectl/pkg/util/term"
)

// kubectlHelp prints help and usage exactly as k8s.io/kubectl's templater
// (templates.ActsAsRootCommand with MainHelpTemplate and MainUsageTemplate,
// templates.UseOptionsTemplates) does, in Go instead of text/template. The
// templater executes templates on *cobra.Command: text/template looks
// methods up by name at run time, so the linker must then keep every
// exported method of every type in the binary, which made it 56% larger
// (31 MB to 48 MB). TestHelpMatchesKubectlTemplater compares every
// command's help with the templater's, byte for byte.
type kubectlHelp struct {
	root   *cobra.Command
	groups templates.CommandGroups
}

// help is MainHelpTemplate: the long description (else the summary), then
// the usage for a command that runs or has subcommands.
func (h kubectlHelp) help(c *cobra.Command, _ []string) {
	var b strings.Builder
	text := c.Long
	if text == "" {
		text = c.Short
	}
	b.WriteString(strings.TrimSpace(text))
	if c.Runnable() || c.HasSubCommands() {
		b.WriteString(c.UsageString())
	}
	_, _ = io.WriteString(term.NewResponsiveWriter(c.OutOrStdout()), b.String())
}

// usage is MainUsageTemplate, one section after the other.
func (h kubectlHelp) usage(c *cobra.Command) error {
	var b strings.Builder
	b.WriteString("\n\n")
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Aliases:\n%s\n\n", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "Examples:\n%s\n\n", trimRight(c.Example))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "%s\n\n", h.commandGroups(c))
	}
	if flags := visibleFlags(c); flags.HasFlags() {
		fmt.Fprintf(&b, "Options:\n%s\n\n", trimRight(flagsUsages(flags)))
	}
	if use := c.UseLine(); c.Runnable() && use != "" && use != h.rootOf(c).CommandPath() {
		if c.HasFlags() && !strings.Contains(use, "[options]") {
			use += " [options]"
		}
		fmt.Fprintf(&b, "Usage:\n  %s\n\n", use)
	}
	if c.HasSubCommands() {
		fmt.Fprintf(&b, "Use \"%s <command> --help\" for more information about a given command.\n", c.CommandPath())
	}
	if opts := h.optionsCommandFor(c); opts != "" {
		fmt.Fprintf(&b, "Use \"%s\" for a list of global command-line options (applies to all commands).\n", opts)
	}
	_, err := io.WriteString(term.NewResponsiveWriter(c.OutOrStderr()), b.String())
	return err
}

// OptionsUsage is OptionsUsageTemplate: the flags every command inherits.
func OptionsUsage(c *cobra.Command) error {
	if !c.HasInheritedFlags() {
		return nil
	}
	text := "The following options can be passed to any command:\n\n" + flagsUsages(c.InheritedFlags())
	_, err := io.WriteString(term.NewResponsiveWriter(c.OutOrStderr()), text)
	return err
}

// commandGroups lists subcommands: the root's by group, the rest of its
// commands (but "options") under "Other Commands:"; any other command's
// under "Available Commands:".
func (h kubectlHelp) commandGroups(c *cobra.Command) string {
	var groups templates.CommandGroups
	if len(h.groups) > 0 && c == h.root {
		groups = templates.AddAdditionalCommands(h.groups, "Other Commands:", visibleCommands(c.Commands()))
	} else {
		groups = templates.CommandGroups{{Message: "Available Commands:", Commands: visibleCommands(c.Commands())}}
	}
	var out []string
	for _, g := range groups {
		lines := []string{g.Message}
		for _, sub := range g.Commands {
			if sub.IsAvailableCommand() {
				lines = append(lines, fmt.Sprintf("  %-*s   %s", sub.NamePadding(), sub.Name(), sub.Short))
			}
		}
		out = append(out, strings.Join(lines, "\n"))
	}
	return strings.Join(out, "\n\n")
}

// visibleCommands leaves out hidden commands and "options", which the
// usage footer points to instead.
func visibleCommands(cmds []*cobra.Command) []*cobra.Command {
	out := []*cobra.Command{}
	for _, c := range cmds {
		if !c.Hidden && c.Name() != "options" {
			out = append(out, c)
		}
	}
	return out
}

func (h kubectlHelp) rootOf(c *cobra.Command) *cobra.Command {
	if !c.HasParent() {
		return c
	}
	return h.root
}

// optionsCommandFor is "PARENT options" for the nearest parent of a
// runnable command that has an options command.
func (h kubectlHelp) optionsCommandFor(c *cobra.Command) string {
	if !c.Runnable() {
		return ""
	}
	parents := []*cobra.Command{c}
	for cur := c; h.rootOf(cur) != cur && cur.HasParent(); {
		cur = cur.Parent()
		parents = append(parents, cur)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		if _, _, err := parents[i].Find([]string{"options"}); err == nil {
			return parents[i].CommandPath() + " options"
		}
	}
	return ""
}

// visibleFlags are the command's own flags: local, not persistent, not
// --help.
func visibleFlags(c *cobra.Command) *pflag.FlagSet {
	persistent := c.PersistentFlags()
	out := pflag.NewFlagSet("visible", pflag.ContinueOnError)
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if persistent.Lookup(f.Name) == nil && f.Name != "help" {
			out.AddFlag(f)
		}
	})
	return out
}

// flagsUsages prints flags in kubectl's layout, wrapped to the terminal.
func flagsUsages(flags *pflag.FlagSet) string {
	var buf bytes.Buffer
	limit, err := term.GetWordWrapperLimit()
	if err != nil {
		limit = 0
	}
	p := templates.NewHelpFlagPrinter(&buf, limit)
	flags.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			p.PrintHelpFlag(f)
		}
	})
	return buf.String()
}

func trimRight(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// Setup gives the command tree kubectl's help: long descriptions and
// examples normalised by kubectl's templates, command groups, each command's
// own flags under "Options:", and the global flags (connection flags, -v,
// --color, ...) listed once by `kubectl slices options` instead of under
// every command. It runs after every command is added, so commands and
// flags added later follow the same conventions without extra wiring.
func Setup(root *cobra.Command, groups templates.CommandGroups) {
	templates.NormalizeAll(root)
	h := kubectlHelp{root: root, groups: groups}
	root.SilenceUsage = true
	root.SetUsageFunc(h.usage)
	root.SetHelpFunc(h.help)
	if !root.Runnable() {
		// As kubectl: the bare command prints its help, which then also
		// shows the usage line and the pointer to "options".
		root.Run = func(c *cobra.Command, _ []string) { _ = c.Help() }
	}
}
