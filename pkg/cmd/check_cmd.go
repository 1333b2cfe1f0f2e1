package cmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/lifecycle"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
)

// CheckOptions are check's typed options.
type CheckOptions struct {
	*RootOptions
	Plan      PlanFlags
	Output    string
	namespace string
}

const checkExitHelp = `Exit codes (as diff):
  0  healthy: no findings
  1  findings
  2  usage error
  4  the API server refused or failed (Forbidden, unreachable)
  130  interrupted (Ctrl-C)`

func newCheckCommand(root *RootOptions) *cobra.Command {
	o := &CheckOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:   "check [-n NAMESPACE | -A]",
		Short: "Audit every Service's EndpointSlices and print the command that repairs each finding",
		Long: `Audit every Service of a namespace (or, with -A, of the cluster) and every EndpointSlice
of kubectl-slices, reading each resource once into memory, and list what is broken with the
command that repairs it:

  NoSlices   a Service with a selector has no slices at all: kube-controller-manager
             writes at least a placeholder, so its EndpointSlice controller is likely down
             (repair: kubectl slices sync)
  Stale      the slices (of any manager) publish endpoints the Pods no longer justify, or
             miss some they do (repair: sync, or explain for other managers' slices)
  HandBack   slices of kubectl-slices and of kube-controller-manager both publish the
             Service (repair: kubectl slices release)
  Orphaned   slices of kubectl-slices whose Service is gone, has no selector, became
             ExternalName, or is a re-created Service with another UID (repair: prune)
  OverLimit  a slice holds more endpoints than --max-endpoints-per-slice
  StaleEndpoints     a v1 Endpoints object of kubectl-slices (sync --with-endpoints) no
                     longer lists what the Pods justify (repair: sync --with-endpoints)
  OrphanedEndpoints  a v1 Endpoints object of kubectl-slices whose Service is gone, has no
                     selector or became ExternalName (repair: prune)

A Service without selector is judged against its Endpoints object, as sync mirrors it:
our mirrored slices that no longer match it are Stale, none at all is NoSlices, and ours
whose Endpoints object is gone are Orphaned (repair: sync). Without the right to read
Endpoints, what needs them is skipped and said so on stderr (and in -o json).

Like diff, the exit code says whether anything was found, so check serves as a CI or
cron probe.

` + checkExitHelp,
		Example: `  # Audit the whole cluster
  kubectl slices check -A

  # One namespace, as data
  kubectl slices check -n shop -o json

  # A cron probe
  kubectl slices check -A >/dev/null || alert "EndpointSlices need repair"`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	addPlanFlags(cmd, &o.Plan)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml (default: a table)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete resolves the namespace: -n's, the kubeconfig's, or all with -A.
func (o *CheckOptions) Complete(*cobra.Command, []string) error {
	var err error
	o.namespace, err = o.scopeNamespace()
	return err
}

// Validate checks the flags before anything is read.
func (o *CheckOptions) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
	default:
		return exit.Usagef("-o must be json or yaml, got %q", o.Output)
	}
	return o.Plan.validate()
}

// Run audits and prints; findings exit 1.
func (o *CheckOptions) Run(ctx context.Context) error {
	client, err := o.Clientset()
	if err != nil {
		return err
	}
	ns := o.namespace
	report, err := lifecycle.Audit(ctx, client, ns, o.Plan.options())
	if err != nil {
		if ctx.Err() != nil {
			return exit.FromSignal(ctx)
		}
		return exit.Describe(ns, "", err)
	}
	if err := printers.CheckOutput(o.Out, o.ErrOut, printers.StyleFor(o.Color, o.Out), o.Output, report); err != nil {
		return err
	}
	if !report.Healthy {
		return &exit.Error{Code: exit.Changes, Err: exit.ErrPrinted}
	}
	return nil
}
