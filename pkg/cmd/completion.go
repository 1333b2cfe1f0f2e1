package cmd

import (
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

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

// registerCompletions completes namespaces, contexts, clusters and users,
// as kubectl does.
func registerCompletions(cmd *cobra.Command, o *RootOptions) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names, _ := o.names("namespaces")
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	kubeconfigNames := func(pick func(completion.Kubeconfig) []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			cfg, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return pick(completion.KubeconfigNames(cfg)), cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("context", kubeconfigNames(func(k completion.Kubeconfig) []string { return k.Contexts }))
	_ = cmd.RegisterFlagCompletionFunc("cluster", kubeconfigNames(func(k completion.Kubeconfig) []string { return k.Clusters }))
	_ = cmd.RegisterFlagCompletionFunc("user", kubeconfigNames(func(k completion.Kubeconfig) []string { return k.Users }))
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
}

// completeServices completes the Service arguments of a command
// (completion.Services); nothing is offered once the command takes no more
// arguments, nor with -A, where the command refuses names.
func (o *RootOptions) completeServices(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if o.AllNamespaces || c.ValidateArgs(append(append([]string{}, args...), "x")) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := o.names("services")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completion.Services(names, args, prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeOneService completes the single Service explain takes: nothing
// once it is named. explain checks its arguments itself, for one-line
// errors, so cobra's argument validator in completeServices cannot tell.
func (o *RootOptions) completeOneService(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if completion.OneServiceNamed(args) {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.completeServices(c, args, prefix)
}

// completeExplain completes explain's arguments: Pod names once a Pod is
// being named (pod/...), else the one Service.
func (o *RootOptions) completeExplain(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if !completion.PodPrefix(args, prefix) {
		return o.completeOneService(c, args, prefix)
	}
	names, err := o.names("pods")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return completion.Pods(names, args, prefix), cobra.ShellCompDirectiveNoFileComp
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

// names lists the names of a resource's objects: every namespace's, or the
// other resources' in -n's (or the kubeconfig's) namespace.
func (o *RootOptions) names(resource string) ([]string, error) {
	client, err := o.completionClient()
	if err != nil {
		return nil, err
	}
	ns := ""
	if resource != "namespaces" {
		if ns, err = o.Namespace(); err != nil {
			return nil, err
		}
	}
	return completion.Names(client, resource, ns)
}

// completeWorkloads completes --sidecar-for: the kinds first, then the
// workloads of that kind in the namespace, from the live cluster.
func (o *DeployOptions) completeWorkloads(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	out, ok := completion.Workloads(prefix, func(resource string) []string {
		names, _ := o.names(resource)
		return names
	})
	if !ok {
		return completion.WorkloadKinds, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
