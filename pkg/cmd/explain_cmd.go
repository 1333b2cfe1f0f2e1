package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
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
	args      []string
}

func newExplainCommand(root *RootOptions) *cobra.Command {
	o := &ExplainOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:   "explain svc/NAME",
		Short: "Explain why each Pod is or is not an endpoint, and where the live slices drift",
		Long: `Show a Service's endpoint story: its ports and address families, how many Pods its
selector matches (and, when none, the Pods one label away), every Pod's decision with the
reason code sync acts on, the slices each manager publishes, how the live endpoints drift
from the desired ones, and a diagnosis with the command that repairs it.

With --local -f, Services, Pods, Nodes and EndpointSlices are read from manifests (a
'kubectl get -o yaml' dump or a 'kubectl cluster-info dump' directory) and no cluster is
contacted.

Reason codes: PodTerminal, NoPodIP, NodeNotFound, AddressFamilyMismatch, ServiceTerminating
(exclusions); PortNotFound, NodeUnreadable, AddressFamilyMismatch, NodeNotFound (notes on
included Pods). Drift kinds: Missing, Stale, Changed, Duplicate, Conflict.

` + exitCodeHelp,
		Example: `  # Why does svc/web have no endpoints?
  kubectl slices explain svc/web -n shop

  # Only the Pods that are left out, for a large Service
  kubectl slices explain svc/web --show-pods=excluded

  # From a dump, with no cluster at all
  kubectl get svc,pods,nodes,endpointslices -A -o yaml > dump.yaml
  kubectl slices explain svc/web -n shop --local -f dump.yaml

  # Machine-readable (schema kubectl-slices.explain/v1)
  kubectl slices explain svc/web -o json`,
		ValidArgsFunction: root.completeOneService,
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(c.Context())
		},
	}
	addPlanFlags(cmd, &o.Plan)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: for people)")
	cmd.Flags().StringVar(&o.ShowPods, "show-pods", "", "Which Pods to list: all or excluded (default: all up to 50, then counts by reason)")
	cmd.Flags().BoolVar(&o.Local, "local", false, "Read objects from -f instead of the cluster")
	cmd.Flags().StringSliceVarP(&o.Filenames, "filename", "f", nil, "Manifest files or directories to read with --local")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("show-pods", cobra.FixedCompletions([]string{"all", "excluded"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Validate checks flags and the argument before anything is read.
func (o *ExplainOptions) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
	default:
		return usageError("-o must be json or yaml, got %q", o.Output)
	}
	switch printers.ShowPods(o.ShowPods) {
	case printers.ShowPodsAuto, printers.ShowPodsAll, printers.ShowPodsExcluded:
	default:
		return usageError("--show-pods must be all or excluded, got %q", o.ShowPods)
	}
	if o.Local != (len(o.Filenames) > 0) {
		return usageError("--local and -f go together: --local -f FILE|DIR")
	}
	if err := o.Plan.validate(); err != nil {
		return err
	}
	// Named as sync names Services (svc/NAME, NAME, svc NAME), one only.
	if len(o.args) == 0 || (len(o.args) == 1 && serviceTypes[strings.ToLower(o.args[0])]) {
		return usageError("name the Service to explain: svc/NAME")
	}
	names, err := normalizeArgs(o.args)
	if err != nil {
		return err
	}
	if len(names) > 1 {
		return usageError("explain takes one Service, got %d: run it once per Service", len(names))
	}
	return nil
}

// Run explains one Service; the exit code says whether it drifts.
func (o *ExplainOptions) Run(ctx context.Context) error {
	names, _ := normalizeArgs(o.args)
	name := names[0][len("services/"):]
	var in reconcile.Input
	var nsPods []*corev1.Pod
	var defaulted []string
	var err error
	if o.Local {
		in, nsPods, defaulted, err = o.readLocal(name)
	} else {
		in, nsPods, err = o.readCluster(ctx, name)
	}
	if err != nil {
		return err
	}
	plan, err := o.plan(ctx, in)
	if err != nil {
		return err
	}
	if len(plan.Pods) > 0 {
		nsPods = nil
	}
	// Warnings go to stderr, whatever the format; -o json also carries them.
	printers.Warnings(o.ErrOut, printers.StyleFor(o.Color, o.ErrOut), plan)
	report := explain.Build(in, plan, explain.Options{ManagedBy: o.Plan.ManagedBy, MaxEndpointsPerSlice: o.Plan.MaxEndpoints, NamespacePods: nsPods, Defaulted: defaulted, Now: time.Now(),
		Endpoints: o.controllerEndpoints(ctx, in.Service)})
	switch o.Output {
	case "json":
		b, err := json.MarshalIndent(report, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(o.Out, string(b))
	case "yaml":
		b, err := yaml.Marshal(report)
		if err != nil {
			return err
		}
		fmt.Fprint(o.Out, string(b))
	default:
		if err := printers.Explain(o.Out, printers.StyleFor(o.Color, o.Out), report, printers.ShowPods(o.ShowPods)); err != nil {
			return err
		}
	}
	if !report.InSync {
		return &ExitError{Code: ExitChanges, Err: errAlreadyPrinted}
	}
	return nil
}

// readCluster reads the Service and its inputs; all Pods of the namespace
// only if the selector matches none (for near misses).
func (o *ExplainOptions) readCluster(ctx context.Context, name string) (reconcile.Input, []*corev1.Pod, error) {
	client, targets, err := o.connect(ctx, TargetFlags{}, []string{name})
	if err != nil {
		return reconcile.Input{}, nil, err
	}
	t := targets[0]
	if t.Err != nil {
		return reconcile.Input{}, nil, describe(t.Namespace, t.Name, t.Err)
	}
	reader := cluster.Reader{Client: client}
	in, err := reader.Load(ctx, t.Service)
	if err != nil {
		return in, nil, describe(t.Namespace, t.Name, err)
	}
	var nsPods []*corev1.Pod
	if len(in.Pods) == 0 && len(t.Service.Spec.Selector) > 0 {
		if nsPods, err = reader.Pods(ctx, t.Namespace, ""); err != nil {
			return in, nil, describe(t.Namespace, t.Name, err)
		}
	}
	return in, nsPods, nil
}

// readLocal reads the Service and its inputs from manifests, defaulted as
// the API server would have stored them. Objects without a namespace go to
// -n's, or the kubeconfig's, or "default" with no kubeconfig; without -n, a
// Service name that only one namespace of a dump holds is found there.
func (o *ExplainOptions) readLocal(name string) (reconcile.Input, []*corev1.Pod, []string, error) {
	m, err := cluster.ReadManifests(o.Filenames)
	if err != nil {
		return reconcile.Input{}, nil, nil, usageError("cannot read %v: %v", o.Filenames, err)
	}
	explicit := o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != ""
	ns, err := o.Namespace()
	if err != nil || ns == "" {
		ns = "default" // no kubeconfig is needed offline
	}
	m.ApplyDefaults(ns)
	svc := m.Service(ns, name)
	if svc == nil && !explicit {
		if found := m.Namespaces(name); len(found) == 1 {
			ns, svc = found[0], m.Service(found[0], name)
		}
	}
	if svc == nil {
		return reconcile.Input{}, nil, nil, &ExitError{Code: ExitNotFound,
			Err: fmt.Errorf("service %s/%s not found in %v: check the name and the namespace (-n)", ns, name, o.Filenames)}
	}
	in := m.Input(svc)
	return in, m.PodsIn(ns), m.Defaulted(svc, in.Pods, in.Slices), nil
}
