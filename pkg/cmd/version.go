package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
)

// Build information, set by `make build` and `make dist` with
//
//	-ldflags "-X .../pkg/cmd.Version=v1.2.3 -X .../pkg/cmd.Commit=SHA -X .../pkg/cmd.Date=RFC3339"
//
// Date is the commit's time, not the build's, so that builds reproduce.
// A plain `go build` leaves Commit and Date empty; they are then taken from
// the VCS stamp the Go toolchain embeds, when there is one.
var (
	Version = "v0.0.0-dev"
	Commit  = ""
	Date    = ""
)

// VersionOptions are version's typed options.
type VersionOptions struct {
	*RootOptions
	ClientOnly bool
	Output     string
}

func newVersionCommand(root *RootOptions) *cobra.Command {
	o := &VersionOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the plugin's version and the API server's",
		Long:    help.Text("version.long"),
		Example: help.Text("version.example"),
		Args:    cobra.NoArgs,
		RunE:    runCommand(o),
	}
	cmd.Flags().BoolVar(&o.ClientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "One of 'yaml' or 'json'.")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete has nothing to fill in.
func (o *VersionOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks -o.
func (o *VersionOptions) Validate() error {
	return args.Output(o.Output, "", "json", "yaml")
}

// Run prints the versions; the client's even when the server's fails.
func (o *VersionOptions) Run(ctx context.Context) error {
	report := printers.VersionReport{ClientVersion: printers.ThisBuild(Version, Commit, Date)}
	var serverErr error
	if !o.ClientOnly {
		var client kubernetes.Interface
		if client, serverErr = o.Clientset(); serverErr == nil {
			if report.ServerVersion, serverErr = cluster.ServerVersion(ctx, client); serverErr != nil {
				serverErr = exit.Cluster(serverErr)
			}
		}
	}
	if err := printers.Version(o.Out, o.Output, report); err != nil {
		return err
	}
	return serverErr
}
