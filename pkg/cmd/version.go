package cmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"
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
			v, err := serverVersion(c.Context(), client)
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

// serverVersion is discovery's ServerVersion with the command's context
// (client-go's runs with context.TODO(), which Ctrl-C cannot stop).
func serverVersion(ctx context.Context, client kubernetes.Interface) (*version.Info, error) {
	body, err := client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("unable to parse the server version: %w", err)
	}
	return &info, nil
}

// describeCluster words an error that is about the cluster, not a Service.
func describeCluster(err error) error {
	if isUnreachable(err) {
		return &ExitError{Code: ExitAPI, Err: fmt.Errorf("%s", unreachable(err))}
	}
	return &ExitError{Code: classify(err), Err: err}
}
