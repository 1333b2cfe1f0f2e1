package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/args"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/judge"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// ExplainOptions are explain's typed options.
type ExplainOptions struct {
	*RootOptions
	Plan      PlanFlags
	Output    string
	ShowPods  string
	Local     bool
	Filenames []string
	// MaxInputSize bounds what --local reads ("64Mi").
	MaxInputSize string
	// ServerVersion, when set, is the release judged instead of the API
	// server's (--server-version); the only one offline.
	ServerVersion string
	// Target is what is explained: a Service, Pods or an address (--ip).
	Target args.Explain
	// namespace is -n's or the kubeconfig's ("default" offline without a
	// kubeconfig).
	namespace string
}

func newExplainCommand(root *RootOptions) *cobra.Command {
	o := &ExplainOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:               "explain svc/NAME | pod/NAME... | --ip ADDRESS",
		Short:             "Explain why each Pod is or is not an endpoint, and where the live slices drift",
		Long:              help.Text("explain.long") + exit.Help,
		Example:           help.Text("explain.example"),
		ValidArgsFunction: root.completer().ExplainArgs,
		RunE:              runCommand(o),
	}
	addPlanFlags(cmd, &o.Plan)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: for people)")
	cmd.Flags().StringVar(&o.ShowPods, "show-pods", "", "Which Pods to list: all or excluded (default: all up to 50, then counts by reason)")
	cmd.Flags().BoolVar(&o.Local, "local", false, "Read objects from -f instead of the cluster")
	cmd.Flags().StringSliceVarP(&o.Filenames, "filename", "f", nil, "Manifest files or directories to read with --local")
	cmd.Flags().StringVar(&o.ServerVersion, "server-version", "", "The cluster's release (v1.32.13) for notes on where its kube-controller-manager differs (default: the API server's; none with --local)")
	cmd.Flags().StringVar(&o.Target.IP, "ip", "", "Explain an address: every EndpointSlice and Endpoints object that holds it, and the Pod that has it now (-A: every namespace)")
	cmd.Flags().StringVarP(&o.Target.Selector, "selector", "l", "", "With pod: explain the Pods matching this label selector")
	cmd.Flags().StringVar(&o.MaxInputSize, "max-input-size", "64Mi", "With --local: the most bytes read over all -f inputs (a quantity: 64Mi, 1Gi)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("show-pods", cobra.FixedCompletions([]string{"all", "excluded"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete normalises the argument, named as sync names Services (svc/NAME,
// NAME, svc NAME), and resolves the namespace.
func (o *ExplainOptions) Complete(_ *cobra.Command, argv []string) error {
	if err := o.Target.Parse(argv); err != nil {
		return err
	}
	ns, err := o.Namespace()
	switch {
	case err != nil && !o.Local:
		return err
	case err != nil || ns == "":
		ns = "default" // no kubeconfig is needed offline
	}
	o.namespace = ns
	return nil
}

// Validate checks flags and the argument before anything is read.
func (o *ExplainOptions) Validate() error {
	if err := args.Output(o.Output, "", "json", "yaml"); err != nil {
		return err
	}
	if !printers.ShowPods(o.ShowPods).Valid() {
		return exit.Usagef("--show-pods must be all or excluded, got %q", o.ShowPods)
	}
	if o.Local != (len(o.Filenames) > 0) {
		return exit.Usagef("--local and -f go together: --local -f FILE|DIR")
	}
	if _, err := args.Size("--max-input-size", o.MaxInputSize); err != nil {
		return err
	}
	if o.ServerVersion != "" && cluster.ReleaseMinor(o.ServerVersion) == 0 {
		return exit.Usagef("--server-version must be a Kubernetes release such as v1.32.13, got %q", o.ServerVersion)
	}
	if err := o.Plan.validate(); err != nil {
		return err
	}
	return o.Target.Validate(o.AllNamespaces, o.ShowPods != "")
}

// Run explains one Service; the exit code says whether it drifts.
func (o *ExplainOptions) Run(ctx context.Context) error {
	defer cluster.ReportRequests(o.ErrOut)
	switch {
	case o.Target.IP != "":
		return o.runIP(ctx)
	case o.Target.PodMode:
		return o.runPods(ctx)
	}
	var local cluster.Local
	var err error
	if o.Local {
		local, err = o.readLocal(ctx, o.Target.Names[0])
	} else {
		local.Input, local.NamespacePods, err = o.readCluster(ctx, o.Target.Names[0])
	}
	if err != nil {
		return err
	}
	in, nsPods := local.Input, local.NamespacePods
	plan, err := o.plan(ctx, in)
	if err != nil {
		return err
	}
	if len(plan.Pods) > 0 {
		nsPods = nil
	}
	// Warnings go to stderr, whatever the format; -o json also carries them.
	printers.Warnings(o.ErrOut, printers.StyleFor(o.Color, o.ErrOut), plan)
	eps, minor := o.clusterExtras(ctx, in.Service)
	report := explain.Build(in, plan, explain.Options{ManagedBy: judge.ManagedByOf(in.Service, o.Plan.ManagedBy), MaxEndpointsPerSlice: o.Plan.MaxEndpoints, NamespacePods: nsPods, Defaulted: local.Defaulted,
		Now: time.Now(), Endpoints: eps, ServerMinor: minor})
	if o.Output != "" {
		err = printers.Data(o.Out, o.Output, report)
	} else {
		err = printers.Explain(o.Out, printers.StyleFor(o.Color, o.Out), report, printers.ShowPods(o.ShowPods))
	}
	if err != nil {
		return err
	}
	return exit.ChangesIf(!report.InSync)
}

// readCluster reads the Service and its inputs; all Pods of the namespace
// only if the selector matches none (for near misses).
func (o *ExplainOptions) readCluster(ctx context.Context, name string) (reconcile.Input, []*corev1.Pod, error) {
	client, targets, err := o.connect(ctx, TargetFlags{Names: []string{name}, Namespace: o.namespace})
	if err != nil {
		return reconcile.Input{}, nil, err
	}
	t := targets[0]
	if t.Err != nil {
		return reconcile.Input{}, nil, exit.Describe(t.Namespace, t.Name, t.Err)
	}
	in, nsPods, err := cluster.Reader{Client: client}.LoadNearMisses(ctx, t.Service)
	if err != nil {
		return in, nil, exit.Describe(t.Namespace, t.Name, err)
	}
	return in, nsPods, nil
}

// readLocal reads the Service and its inputs from manifests, defaulted as
// the API server would have stored them. Objects without a namespace go to
// -n's, or the kubeconfig's, or "default" with no kubeconfig; without -n, a
// Service name that only one namespace of a dump holds is found there.
func (o *ExplainOptions) readLocal(ctx context.Context, name string) (cluster.Local, error) {
	m, err := o.readManifests(ctx)
	if err != nil {
		return cluster.Local{}, err
	}
	explicit := o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != ""
	local, err := m.Load(o.namespace, name, explicit)
	var nf *cluster.ServiceNotFoundError
	switch {
	case errors.As(err, &nf):
		return local, &exit.Error{Code: exit.NotFound, Err: fmt.Errorf("%v in %v: check the name and the namespace (-n)", nf, o.Filenames)}
	case err != nil:
		return local, exit.Usagef("%v: the API server would refuse it", err)
	}
	return local, nil
}
