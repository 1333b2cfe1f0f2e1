package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/util/templates"

	"github.com/kubectl-slices/kubectl-slices/pkg/help"
)

// kubectlHelp renders what kubectl's own templater renders, byte for byte,
// for every command, the bare root, options and flag errors: the root is
// built twice, once as NewRootCommand leaves it and once with kubectl's
// templates.ActsAsRootCommand and UseOptionsTemplates put back.
func TestHelpMatchesKubectlTemplater(t *testing.T) {
	invocations := [][]string{{}, {"--help"}, {"help"}, {"options"}}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || strings.HasPrefix(c.Name(), "__") {
			return
		}
		if c.HasParent() {
			path := strings.Fields(strings.TrimPrefix(c.CommandPath(), c.Root().CommandPath()))
			invocations = append(invocations, append(path, "--help"), append(path, "--no-such-flag"))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(genericiooptions.NewTestIOStreamsDiscard()))
	if len(invocations) < 15 {
		t.Fatalf("only %d invocations: %v", len(invocations), invocations)
	}
	for _, args := range invocations {
		got := helpOutput(args, nil)
		want := helpOutput(args, func(root *cobra.Command) {
			flagErr := root.FlagErrorFunc()
			templates.ActsAsRootCommand(root, []string{"options"}, help.Groups(root)...)
			root.SetFlagErrorFunc(flagErr)
			opts, _, _ := root.Find([]string{"options"})
			templates.UseOptionsTemplates(opts)
			opts.SetHelpFunc(func(c *cobra.Command, _ []string) { _ = c.Usage() })
		})
		// kubectl's templater names the root by its binary name in the
		// "--help" hint, where the user typed "kubectl slices".
		want = strings.ReplaceAll(want, `Use "kubectl-slices `, `Use "kubectl slices `)
		if got != want {
			t.Errorf("kubectl slices %s:\n--- ours\n%s\n--- kubectl's templater\n%s", strings.Join(args, " "), got, want)
		}
		if len(args) > 0 && args[len(args)-1] == "--help" && args[0] != "options" && !strings.Contains(got, "\nUsage:\n  kubectl slices") {
			t.Errorf("kubectl slices %s printed no usage:\n%s", strings.Join(args, " "), got)
		}
	}
}

// helpOutput runs a fresh root, changed by setup if given, and returns its
// stdout and stderr.
func helpOutput(args []string, setup func(*cobra.Command)) string {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	root := NewRootCommand(streams)
	if setup != nil {
		setup(root)
	}
	root.SetArgs(args)
	err := root.Execute()
	s := out.String() + "\n--- stderr\n" + errOut.String()
	if err != nil {
		s += "\n--- error\n" + err.Error()
	}
	return s
}
