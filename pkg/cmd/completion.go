package cmd

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// completionTimeout bounds every lookup a completion makes: a shell waiting
// on TAB must not hang on an unreachable cluster.
const completionTimeout = 3 * time.Second

func newCompletionCommand(o *RootOptions) *cobra.Command {
	return &cobra.Command{
		Use:                   "completion SHELL",
		DisableFlagsInUseLine: true,
		Short:                 "Print the shell completion code for bash, zsh, fish or powershell",
		Long: `Print the shell completion code for the given shell (bash, zsh, fish or powershell).

Typed as kubectl slices, the plugin is completed by kubectl itself (1.26 or later, with
kubectl's own completion loaded): kubectl runs the executable kubectl_complete-slices
from PATH for every word after "slices". The repository ships it in completions/; krew
installs one executable only, so krew users create it as the plugin's caveats say.

The code printed here completes the kubectl-slices executable when it is run directly.

Service names (svc/NAME or NAME), namespaces (-n), contexts (--context), clusters and
users are completed from the kubeconfig and the live cluster; a lookup gives up after
3 seconds and then offers nothing.`,
		Example: `  # Complete "kubectl slices ..." through kubectl (put the shim next to kubectl-slices)
  install -m 0755 completions/kubectl_complete-slices "$(dirname "$(command -v kubectl-slices)")"

  # Load the bash completion of kubectl-slices into the current shell (needs bash-completion)
  source <(kubectl slices completion bash)

  # Load it in every new bash
  kubectl slices completion bash > ~/.local/share/bash-completion/completions/kubectl-slices

  # zsh
  kubectl slices completion zsh > "${fpath[1]}/_kubectl-slices"

  # fish
  kubectl slices completion fish > ~/.config/fish/completions/kubectl-slices.fish

  # PowerShell
  kubectl slices completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(c.ValidArgs, args[0]) {
				return exit.Usagef("name one shell: bash, zsh, fish or powershell (kubectl slices completion bash)")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(o.Out, true)
			case "zsh":
				return root.GenZshCompletion(o.Out)
			case "fish":
				return root.GenFishCompletion(o.Out, true)
			default:
				return root.GenPowerShellCompletionWithDesc(o.Out)
			}
		},
	}
}

// registerCompletions completes namespaces, contexts, clusters and users,
// as kubectl does.
func registerCompletions(cmd *cobra.Command, o *RootOptions) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names, _ := o.names("namespaces", "")
		return names, cobra.ShellCompDirectiveNoFileComp
	})
	kubeconfigNames := func(pick func(contexts, clusters, users []string) []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			cfg, err := o.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return pick(sortedKeys(cfg.Contexts), sortedKeys(cfg.Clusters), sortedKeys(cfg.AuthInfos)), cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("context", kubeconfigNames(func(c, _, _ []string) []string { return c }))
	_ = cmd.RegisterFlagCompletionFunc("cluster", kubeconfigNames(func(_, c, _ []string) []string { return c }))
	_ = cmd.RegisterFlagCompletionFunc("user", kubeconfigNames(func(_, _, u []string) []string { return u }))
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// completionClient is Clientset with every request bounded by completionTimeout.
func (o *RootOptions) completionClient() (kubernetes.Interface, error) {
	if o.NewClient != nil {
		return o.NewClient()
	}
	c, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	c = rest.CopyConfig(c)
	c.Timeout = completionTimeout
	return kubernetes.NewForConfig(c)
}

// completeServices completes the Service arguments of a command: svc/NAME
// (or service/NAME as typed), and bare names after a bare NAME prefix or the
// "svc NAME..." form. Names already given are not offered again, and nothing
// is offered once the command takes no more arguments, nor with -A, where
// the command refuses names.
func (o *RootOptions) completeServices(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if o.AllNamespaces || c.ValidateArgs(append(append([]string{}, args...), "x")) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := o.names("services", "")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return serviceCandidates(names, args, prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeOneService completes the single Service explain takes: nothing
// once it is named (svc/NAME, NAME or svc NAME). explain checks its
// arguments itself, for one-line errors, so cobra's argument validator in
// completeServices cannot tell.
func (o *RootOptions) completeOneService(c *cobra.Command, argv []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if names, err := args.Services(argv); err == nil && len(names) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return o.completeServices(c, argv, prefix)
}

// serviceCandidates turns the namespace's Service names into completions of
// prefix, given the arguments already on the command line.
func serviceCandidates(names, argv []string, prefix string) []string {
	given := map[string]bool{}
	if norm, err := args.Services(argv); err == nil {
		for _, n := range norm {
			given[n] = true
		}
	}
	bare := len(argv) > 0 && args.IsServiceType(argv[0])
	typ, _, typed := strings.Cut(prefix, "/")
	if typed && !args.IsServiceType(typ) {
		return nil
	}
	var out []string
	for _, name := range names {
		if given[name] {
			continue
		}
		var cand string
		switch {
		case bare:
			cand = name
		case typed:
			cand = typ + "/" + name
		case prefix != "" && strings.HasPrefix(name, prefix):
			cand = name
		default:
			cand = "svc/" + name
		}
		if strings.HasPrefix(cand, prefix) {
			out = append(out, cand)
		}
	}
	return out
}

// names lists the names of a resource's objects in ns (the kubeconfig's
// when "services" or a workload), bounded by completionTimeout.
func (o *RootOptions) names(resource, ns string) ([]string, error) {
	client, err := o.completionClient()
	if err != nil {
		return nil, err
	}
	if resource != "namespaces" {
		if ns, err = o.Namespace(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	return cluster.Names(ctx, client, resource, ns)
}

// completeWorkloads completes --sidecar-for: the kinds first, then the
// workloads of that kind in the namespace, from the live cluster.
func (o *DeployOptions) completeWorkloads(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	kind, _, typed := strings.Cut(prefix, "/")
	if !typed {
		return []string{"deploy/", "sts/", "ds/"}, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
	w, err := deploy.ParseWorkload(kind + "/x")
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, _ := o.names(w.Resource, "")
	var out []string
	for _, n := range names {
		if c := kind + "/" + n; strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
