package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
)

// command is kubectl's shape of a command: Complete fills in what the flags
// alone do not say (the namespace, normalised arguments), Validate refuses
// bad input before any request, Run does the work.
type command interface {
	Complete(c *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runCommand is a cobra RunE running o's three steps.
func runCommand(o command) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if err := o.Complete(c, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(c.Context())
	}
}

// scopeNamespace is the namespace a namespace-wide command works on: -n's
// (or the kubeconfig's), or every namespace ("") with -A.
func (o *RootOptions) scopeNamespace() (string, error) {
	if o.AllNamespaces {
		return metav1.NamespaceAll, nil
	}
	return o.Namespace()
}

// addDryRunFlag adds --dry-run and its completion: none does what the
// command does (writes, deletes), server sends it with dryRun=All.
func addDryRunFlag(cmd *cobra.Command, d *apply.DryRun, does, each string) {
	cmd.Flags().StringVar((*string)(d), "dry-run", string(apply.DryRunNone), fmt.Sprintf(`"none" %s; "client" sends nothing; "server" sends %s with dryRun=All`, does, each))
	_ = cmd.RegisterFlagCompletionFunc("dry-run", cobra.FixedCompletions([]string{"none", "client", "server"}, cobra.ShellCompDirectiveNoFileComp))
}
