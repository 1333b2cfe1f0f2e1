package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/profiling"
)

// RootOptions are the flags every command shares.
type RootOptions struct {
	genericiooptions.IOStreams
	ConfigFlags   *genericclioptions.ConfigFlags
	AllNamespaces bool
	Color         string
	QPS           float32
	Burst         int
	Verbosity     int
	// limitsGiven: --qps or --burst was given, so the limits hold as given;
	// otherwise they are lifted under API Priority and Fairness.
	limitsGiven bool
	// NewClient, when set, replaces the kubeconfig's client: unit tests run
	// every command through cobra against a fake clientset, as kubectl's
	// test factory does.
	NewClient func() (kubernetes.Interface, error)
}

// NewRootCommand builds `kubectl slices`.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return newRootCommand(&RootOptions{IOStreams: streams, ConfigFlags: genericclioptions.NewConfigFlags(true)})
}

// newRootCommand builds the command tree around o; tests set o.NewClient.
func newRootCommand(o *RootOptions) *cobra.Command {
	streams := o.IOStreams
	cmd := &cobra.Command{
		Use:     "kubectl-slices",
		Short:   "Explain and repair a Service's EndpointSlices",
		Long:    help.Text("root.long") + exit.Help,
		Example: help.Text("root.example"),
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl slices",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	o.ConfigFlags.WrapConfigFn = o.tuneConfig
	o.ConfigFlags.AddFlags(cmd.PersistentFlags())
	pf := cmd.PersistentFlags()
	pf.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Work on Services in all namespaces")
	pf.StringVar(&o.Color, "color", "auto", "Colour output: auto (terminals only, NO_COLOR honoured), always or never")
	pf.Float32Var(&o.QPS, "qps", 200, "Client-side requests per second towards the API server; unless --qps or --burst is given, lifted once the API server shows it applies API Priority and Fairness")
	pf.IntVar(&o.Burst, "burst", 400, "Client-side request burst towards the API server (see --qps)")
	pf.IntVarP(&o.Verbosity, "v", "v", 0, "Log level of client-go's logs on stderr (0 = none)")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		cluster.SetupLogging(o.Verbosity, o.ErrOut)
		if err := args.Shared(o.Color, o.QPS, o.Burst); err != nil {
			return err
		}
		o.limitsGiven = c.Flags().Changed("qps") || c.Flags().Changed("burst")
		if ns := o.ConfigFlags.Namespace; ns != nil && *ns != "" {
			return args.Namespace(*ns)
		}
		return nil
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit.Usagef("%v\nSee '%s --help' for usage.", err, c.CommandPath())
	})
	o.completer().Register(cmd)
	profiling.AddFlags(cmd, func(msg string) error { return exit.Usagef("%s", msg) })
	cmd.AddCommand(newSyncCommand(o), newDiffCommand(o), newExplainCommand(o), newCheckCommand(o), newVerifyCommand(o), newReleaseCommand(o), newPruneCommand(o), newDeployCommand(o), newWebhookCommand(o), newVersionCommand(o))
	cmd.AddCommand(newCompletionCommand(o), help.NewOptionsCommand(o.Out))
	help.Setup(cmd, help.Groups(cmd))
	return cmd
}

// tuneConfig sets the client's rate limits (--qps, --burst) and user agent.
func (o *RootOptions) tuneConfig(c *rest.Config) *rest.Config {
	return cluster.Tune(c, o.QPS, o.Burst, !o.limitsGiven, fmt.Sprintf("kubectl-slices/%s", Version))
}

// Clientset returns a typed client speaking protobuf.
func (o *RootOptions) Clientset() (kubernetes.Interface, error) {
	return o.clientsetWrapped(nil)
}

// clientsetWrapped is Clientset with wrap (if not nil) around its transport.
func (o *RootOptions) clientsetWrapped(wrap transport.WrapperFunc) (kubernetes.Interface, error) {
	if o.NewClient != nil {
		return o.NewClient()
	}
	c, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, exit.Usagef("cannot load kubeconfig: %v", err)
	}
	return cluster.NewClient(c, wrap)
}

// Namespace is the namespace of the kubeconfig context or -n.
func (o *RootOptions) Namespace() (string, error) {
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", exit.Usagef("cannot load kubeconfig: %v", err)
	}
	return ns, args.Namespace(ns)
}
