package completion

import (
	"github.com/spf13/cobra"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Lister lists the names of a resource's objects: every namespace's, or
// the other resources' in the command's namespace (-n's or the
// kubeconfig's), within Timeout.
type Lister func(resource string) ([]string, error)

// Completer holds what the cobra completion functions read when TAB is
// pressed: the cluster's names, the kubeconfig, and whether -A was given
// (read then, after the flags are parsed).
type Completer struct {
	List          Lister
	RawConfig     func() (clientcmdapi.Config, error)
	AllNamespaces func() bool
}

const noFiles = cobra.ShellCompDirectiveNoFileComp

// Register completes namespaces, contexts, clusters and users, as kubectl
// does, and --color.
func (c Completer) Register(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		names, _ := c.List("namespaces")
		return names, noFiles
	})
	kubeconfigNames := func(pick func(Kubeconfig) []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			cfg, err := c.RawConfig()
			if err != nil {
				return nil, noFiles
			}
			return pick(KubeconfigNames(cfg)), noFiles
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("context", kubeconfigNames(func(k Kubeconfig) []string { return k.Contexts }))
	_ = cmd.RegisterFlagCompletionFunc("cluster", kubeconfigNames(func(k Kubeconfig) []string { return k.Clusters }))
	_ = cmd.RegisterFlagCompletionFunc("user", kubeconfigNames(func(k Kubeconfig) []string { return k.Users }))
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{"auto", "always", "never"}, noFiles))
}

// ServiceArgs completes the Service arguments of a command (Services);
// nothing is offered once the command takes no more arguments, nor with
// -A, where the command refuses names.
func (c Completer) ServiceArgs(cmd *cobra.Command, given []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if c.AllNamespaces() || cmd.ValidateArgs(append(append([]string{}, given...), "x")) != nil {
		return nil, noFiles
	}
	names, err := c.List("services")
	if err != nil {
		return nil, noFiles
	}
	return Services(names, given, prefix), noFiles
}

// ExplainArgs completes explain's arguments: Pod names once a Pod is being
// named (pod/...), else the one Service, and nothing once it is named:
// explain checks its arguments itself, for one-line errors, so cobra's
// argument validator in ServiceArgs cannot tell.
func (c Completer) ExplainArgs(cmd *cobra.Command, given []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if !PodPrefix(given, prefix) {
		if OneServiceNamed(given) {
			return nil, noFiles
		}
		return c.ServiceArgs(cmd, given, prefix)
	}
	names, err := c.List("pods")
	if err != nil {
		return nil, noFiles
	}
	return Pods(names, given, prefix), noFiles
}

// NodeFlag completes a flag that names nodes (verify's --node), a name
// at a time as kubectl completes them: the names already given in the
// value (comma-separated) are not offered again.
func (c Completer) NodeFlag(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	names, err := c.List("nodes")
	if err != nil {
		return nil, noFiles
	}
	return Nodes(names, prefix), noFiles
}

// WorkloadFlag completes deploy's --sidecar-for: the kinds first, then the
// workloads of that kind in the namespace, from the live cluster.
func (c Completer) WorkloadFlag(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	out, ok := Workloads(prefix, func(resource string) []string {
		names, _ := c.List(resource)
		return names
	})
	if !ok {
		return WorkloadKinds, noFiles | cobra.ShellCompDirectiveNoSpace
	}
	return out, noFiles
}
