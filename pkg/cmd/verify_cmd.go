package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/printers"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/probe"
)

// VerifyOptions are verify's typed options.
type VerifyOptions struct {
	*RootOptions
	Targets TargetFlags
	Output  string
	Probe   probe.Run
	Watch   VerifyWatchFlags
	changed func(string) bool
}

func newVerifyCommand(root *RootOptions) *cobra.Command {
	o := &VerifyOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use: "verify (svc/NAME ... | -l SELECTOR | --all)", Short: "Check that every node's service proxy programmed what the EndpointSlices say",
		Long: help.Text("verify.long") + exit.Help, Example: help.Text("verify.example"),
		ValidArgsFunction: root.completer().ServiceArgs, RunE: runCommand(o),
	}
	addTargetFlags(cmd, &o.Targets)
	addVerifyFlags(cmd, &o.Output, &o.Probe, root.completer().NodeFlag)
	addVerifyWatchFlags(cmd, &o.Watch)
	o.changed = func(name string) bool { return cmd.Flags().Changed(name) }
	return cmd
}

// Complete normalises the arguments, resolves the namespace.
func (o *VerifyOptions) Complete(_ *cobra.Command, argv []string) error {
	err := o.completeTargets(&o.Targets, argv)
	o.Probe.Target = verifyWords(argv, o.Targets, o.Probe.OnlyNodes)
	return err
}

// Validate checks the flags before anything is read.
func (o *VerifyOptions) Validate() error {
	if err := validateVerifyFlags(o.changed, o.Output, o.Probe); err != nil {
		return err
	}
	if err := o.Watch.validate(o.changed, o.Output, o.Probe); err != nil {
		return err
	}
	return validateTargets(&o.Targets)
}

// Run verifies the Services; the exit code says agree, drift or could not verify.
func (o *VerifyOptions) Run(ctx context.Context) error {
	if o.Watch.Watch {
		return o.runWatch(ctx)
	}
	defer cluster.ReportRequests(o.ErrOut)
	client, targets, err := o.connect(ctx, o.Targets)
	if err != nil {
		return err
	}
	if err := o.connectProbe(client); err != nil {
		return err
	}
	rep, err := o.Probe.Report(ctx, targets, o.AllNamespaces)
	if err != nil {
		return verifyError(ctx, err)
	}
	if err := printers.VerifyOutput(o.Out, printers.StyleFor(o.Color, o.Out), o.Output, rep); err != nil {
		return err
	}
	return verifyExit(rep.Status)
}

// connectProbe gives the probe the client and a transport to the nodes'
// Pods from the kubeconfig.
func (o *VerifyOptions) connectProbe(client kubernetes.Interface) error {
	cfg, err := o.ConfigFlags.ToRESTConfig()
	if err != nil {
		return exit.Usagef("cannot load kubeconfig: %v", err)
	}
	return o.Probe.Connect(cfg, client)
}
