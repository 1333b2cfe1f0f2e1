package cmd

import (
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-slices/kubectl-slices/pkg/completion"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
)

func newCompletionCommand(o *RootOptions) *cobra.Command {
	return &cobra.Command{
		Use:                   "completion SHELL",
		DisableFlagsInUseLine: true,
		Short:                 "Print the shell completion code for bash, zsh, fish or powershell",
		Long:                  help.Text("completion.long"),
		Example:               help.Text("completion.example"),
		ValidArgs:             completion.Shells,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(c.ValidArgs, args[0]) {
				return exit.Usagef("name one shell: bash, zsh, fish or powershell (kubectl slices completion bash)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			return completion.Script(o.Out, c.Root(), args[0])
		},
	}
}

// completer is what the completion functions read of the flags and the
// cluster.
func (o *RootOptions) completer() completion.Completer {
	return completion.Completer{List: o.names, AllNamespaces: func() bool { return o.AllNamespaces },
		// The loader is built when TAB is pressed, after the flags are parsed.
		RawConfig: func() (clientcmdapi.Config, error) { return o.ConfigFlags.ToRawKubeConfigLoader().RawConfig() }}
}

// completionClient is Clientset with every request bounded by
// completion.Timeout.
func (o *RootOptions) completionClient() (kubernetes.Interface, error) {
	if o.NewClient != nil {
		return o.NewClient()
	}
	c, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return completion.Client(c)
}

// names lists the names of a resource's objects: every namespace's and
// node's (cluster-scoped), or the other resources' in -n's (or the
// kubeconfig's) namespace.
func (o *RootOptions) names(resource string) ([]string, error) {
	client, err := o.completionClient()
	if err != nil {
		return nil, err
	}
	ns := ""
	if resource != "namespaces" && resource != "nodes" {
		if ns, err = o.Namespace(); err != nil {
			return nil, err
		}
	}
	return completion.Names(client, resource, ns)
}
