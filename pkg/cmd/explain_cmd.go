package cmd

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/syncer"
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
	// names are the Services named (Validate wants one), namespace is -n's
	// or the kubeconfig's ("default" offline without a kubeconfig).
	names     []string
	namespace string
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

` + exit.Help,
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
		RunE:              runCommand(o),
	}
	addPlanFlags(cmd, &o.Plan)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: for people)")
	cmd.Flags().StringVar(&o.ShowPods, "show-pods", "", "Which Pods to list: all or excluded (default: all up to 50, then counts by reason)")
	cmd.Flags().BoolVar(&o.Local, "local", false, "Read objects from -f instead of the cluster")
	cmd.Flags().StringSliceVarP(&o.Filenames, "filename", "f", nil, "Manifest files or directories to read with --local")
	cmd.Flags().StringVar(&o.MaxInputSize, "max-input-size", "64Mi", "With --local: the most bytes read over all -f inputs (a quantity: 64Mi, 1Gi)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("show-pods", cobra.FixedCompletions([]string{"all", "excluded"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete normalises the argument, named as sync names Services (svc/NAME,
// NAME, svc NAME), and resolves the namespace.
func (o *ExplainOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) > 1 || (len(args) == 1 && !serviceTypes[strings.ToLower(args[0])]) {
		var err error
		if o.names, err = normalizeArgs(args); err != nil {
			return err
		}
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
	switch o.Output {
	case "", "json", "yaml":
	default:
		return exit.Usagef("-o must be json or yaml, got %q", o.Output)
	}
	switch printers.ShowPods(o.ShowPods) {
	case printers.ShowPodsAuto, printers.ShowPodsAll, printers.ShowPodsExcluded:
	default:
		return exit.Usagef("--show-pods must be all or excluded, got %q", o.ShowPods)
	}
	if o.Local != (len(o.Filenames) > 0) {
		return exit.Usagef("--local and -f go together: --local -f FILE|DIR")
	}
	if _, err := o.maxInputBytes(); err != nil {
		return err
	}
	if err := o.Plan.validate(); err != nil {
		return err
	}
	switch {
	case len(o.names) == 0:
		return exit.Usagef("name the Service to explain: svc/NAME")
	case len(o.names) > 1:
		return exit.Usagef("explain takes one Service, got %d: run it once per Service", len(o.names))
	}
	return nil
}

// Run explains one Service; the exit code says whether it drifts.
func (o *ExplainOptions) Run(ctx context.Context) error {
	name := o.names[0]
	var in reconcile.Input
	var nsPods []*corev1.Pod
	var defaulted []string
	var err error
	if o.Local {
		in, nsPods, defaulted, err = o.readLocal(ctx, name)
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
	report := explain.Build(in, plan, explain.Options{ManagedBy: syncer.ManagedByOf(in.Service, o.Plan.ManagedBy), MaxEndpointsPerSlice: o.Plan.MaxEndpoints, NamespacePods: nsPods, Defaulted: defaulted,
		Now: time.Now(), Endpoints: o.controllerEndpoints(ctx, in.Service)})
	if o.Output != "" {
		err = printers.Data(o.Out, o.Output, report)
	} else {
		err = printers.Explain(o.Out, printers.StyleFor(o.Color, o.Out), report, printers.ShowPods(o.ShowPods))
	}
	if err != nil {
		return err
	}
	if !report.InSync {
		return &exit.Error{Code: exit.Changes, Err: exit.ErrPrinted}
	}
	return nil
}

// readCluster reads the Service and its inputs; all Pods of the namespace
// only if the selector matches none (for near misses).
func (o *ExplainOptions) readCluster(ctx context.Context, name string) (reconcile.Input, []*corev1.Pod, error) {
	client, targets, err := o.connect(ctx, TargetFlags{names: []string{name}, namespace: o.namespace})
	if err != nil {
		return reconcile.Input{}, nil, err
	}
	t := targets[0]
	if t.Err != nil {
		return reconcile.Input{}, nil, exit.Describe(t.Namespace, t.Name, t.Err)
	}
	reader := cluster.Reader{Client: client}
	in, err := reader.Load(ctx, t.Service)
	if err != nil {
		return in, nil, exit.Describe(t.Namespace, t.Name, err)
	}
	var nsPods []*corev1.Pod
	if len(in.Pods) == 0 && len(t.Service.Spec.Selector) > 0 {
		if nsPods, err = reader.Pods(ctx, t.Namespace, ""); err != nil {
			return in, nil, exit.Describe(t.Namespace, t.Name, err)
		}
	}
	return in, nsPods, nil
}

// readManifests reads with the GC at its default pace. main collects
// rarely (GOGC=400), which suits a run that keeps what it decodes; reading
// YAML builds a short-lived tree per object, and at 400 that garbage fills
// the heap to five times what is kept (2 GiB, the soft limit, for a 52 MB
// List of 100k Pods; 0.95 GiB at 100). GOGC still wins when set.
func readManifests(ctx context.Context, paths []string, opts cluster.ReadOptions) (*cluster.Manifests, error) {
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(100))
	}
	return cluster.ReadManifests(ctx, paths, opts)
}

// readLocal reads the Service and its inputs from manifests, defaulted as
// the API server would have stored them. Objects without a namespace go to
// -n's, or the kubeconfig's, or "default" with no kubeconfig; without -n, a
// Service name that only one namespace of a dump holds is found there.
func (o *ExplainOptions) readLocal(ctx context.Context, name string) (reconcile.Input, []*corev1.Pod, []string, error) {
	limit, _ := o.maxInputBytes()
	m, err := readManifests(ctx, o.Filenames, cluster.ReadOptions{MaxBytes: limit, Stdin: o.In})
	if ctx.Err() != nil {
		return reconcile.Input{}, nil, nil, exit.FromSignal(ctx)
	}
	if err != nil {
		return reconcile.Input{}, nil, nil, exit.Usagef("cannot read %v: %v", o.Filenames, err)
	}
	explicit := o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != ""
	ns := o.namespace
	m.ApplyDefaults(ns)
	if err := m.Validate(); err != nil {
		return reconcile.Input{}, nil, nil, exit.Usagef("%v: the API server would refuse it", err)
	}
	svc := m.Service(ns, name)
	if svc == nil && !explicit {
		if found := m.Namespaces(name); len(found) == 1 {
			ns, svc = found[0], m.Service(found[0], name)
		}
	}
	if svc == nil {
		return reconcile.Input{}, nil, nil, &exit.Error{Code: exit.NotFound,
			Err: fmt.Errorf("service %s/%s not found in %v: check the name and the namespace (-n)", ns, name, o.Filenames)}
	}
	in := m.Input(svc)
	return in, m.PodsIn(ns), m.Defaulted(svc, in.Pods, in.Slices), nil
}

// maxInputBytes parses --max-input-size.
func (o *ExplainOptions) maxInputBytes() (int64, error) {
	q, err := resource.ParseQuantity(o.MaxInputSize)
	if err != nil || q.Sign() <= 0 {
		return 0, exit.Usagef("--max-input-size must be a positive size such as 64Mi, got %q", o.MaxInputSize)
	}
	return q.Value(), nil
}
