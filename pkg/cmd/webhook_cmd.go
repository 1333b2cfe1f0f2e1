package cmd

import (
	"context"
	"slices"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/help"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// WebhookOptions are the standalone webhook's typed options.
type WebhookOptions struct {
	*RootOptions
	Plan    PlanFlags
	Webhook WebhookFlags
	// FieldManagers are those of kubectl-slices' own writes (sync
	// --field-manager), which the guard lets write our slices.
	FieldManagers []string
}

func newWebhookCommand(root *RootOptions) *cobra.Command {
	o := &WebhookOptions{RootOptions: root}
	cmd := &cobra.Command{
		Use:     "webhook --webhook-addr HOST:PORT --tls-cert-file FILE --tls-private-key-file FILE",
		Short:   "Serve the validating admission webhook for Services and our EndpointSlices",
		Long:    help.Text("webhook.long") + "\n\n" + webhook.KindMarkdown + "\n\n" + help.Text("webhook.guard"),
		Example: help.Text("webhook.example"),
		Args:    cobra.NoArgs,
		RunE:    runCommand(o),
	}
	addPlanFlags(cmd, &o.Plan)
	addWebhookFlags(cmd, &o.Webhook)
	cmd.Flags().StringSliceVar(&o.FieldManagers, "field-manager", []string{apply.FieldManager}, "Field managers of kubectl-slices' own writes (sync --field-manager), allowed to write our EndpointSlices")
	return cmd
}

// Complete has nothing to fill in: the webhook watches every namespace.
func (o *WebhookOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags before anything is read or served.
func (o *WebhookOptions) Validate() error {
	if err := o.Webhook.Validate(true); err != nil {
		return exit.Usagef("%v", err)
	}
	if err := o.Plan.validate(); err != nil {
		return err
	}
	if slices.Contains(o.FieldManagers, "") || len(o.FieldManagers) == 0 {
		return exit.Usagef("--field-manager must name a field manager")
	}
	return nil
}

// Run fills a read-only informer cache of every namespace and serves the
// webhook from it until ctx is done.
func (o *WebhookOptions) Run(ctx context.Context) error {
	// Its informers' reads wait for the API server, as the loop's do.
	client, err := o.clientsetWrapped(daemon.PatientReads)
	if err != nil {
		return err
	}
	err = daemon.Run(ctx, daemon.Config{Client: client, Namespace: metav1.NamespaceAll,
		Webhook: o.Webhook.Webhook(o.Plan.options(), o.FieldManagers), Log: o.ErrOut, Requests: cluster.RequestsMade})
	return exit.Process(metav1.NamespaceAll, metav1.NamespaceAll, err)
}
