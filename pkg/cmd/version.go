package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Version is set at build time with -ldflags "-X .../pkg/cmd.Version=v1.2.3".
var Version = "v0.0.0-dev"

func newVersionCommand(root *RootOptions) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the API server's",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintf(root.Out, "Client Version: %s\n", Version)
			if clientOnly {
				return nil
			}
			client, err := root.Clientset()
			if err != nil {
				return err
			}
			v, err := client.Discovery().ServerVersion()
			if err != nil {
				return describeCluster(err)
			}
			fmt.Fprintf(root.Out, "Server Version: %s\n", v.GitVersion)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "Print only the client version")
	return cmd
}

// describeCluster words an error that is about the cluster, not a Service.
func describeCluster(err error) error {
	if isUnreachable(err) {
		return &ExitError{Code: ExitAPI, Err: fmt.Errorf("cannot reach the API server: %v; check --kubeconfig, --context and the network", rootCause(err))}
	}
	return &ExitError{Code: classify(err), Err: err}
}
