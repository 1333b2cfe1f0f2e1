package cmd

import (
	"context"
	"fmt"
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
		Use:   "webhook --webhook-addr HOST:PORT --tls-cert-file FILE --tls-private-key-file FILE",
		Short: "Serve the validating admission webhook for Services and our EndpointSlices",
		Long: help.Text("webhook.long") + fmt.Sprint(3) + ` short warnings, which kubectl prints as "Warning: ...", judged by the
explain engine from an in-memory cache of the cluster (no API request per admission).
The findings; --deny-on turns chosen ones into denials:

` + webhook.KindMarkdown + `

/validate/endpointslices refuses a CREATE or UPDATE of an EndpointSlice labelled
endpointslice.kubernetes.io/managed-by=kubectl-slices (--managed-by), and a write that
relabels one of our slices to another manager, unless the writer, as the API server
authenticated it, is allowed (a user named by --allow-user, a member of a group named by
--allow-group; 'sync --watch' also allows its own user) AND writes with kubectl-slices'
field manager (--field-manager): anyone can send a field manager, so it never admits a
writer alone; it tells an allowed writer's sync from a hand edit the next sync would undo.
It also refuses a CREATE or UPDATE of a slice labelled with kube-controller-manager's values
(endpointslice-controller.k8s.io, endpointslicemirroring-controller.k8s.io) unless the
writer is one of --controller-user (the controller manager's user and its controllers'
ServiceAccounts by default): a label is the client's word, and a forged controller slice
would make the loop hand a Service back. DELETE is always allowed, and so is an update
that changes only ownerReferences and removes finalizers (the garbage collector's writes),
whoever makes it: it gives no one more than DELETE.

Service findings name Pods, their labels, owners and ports only when the caller is the API
server, proven by a client certificate signed by a CA of --client-ca-file (the API
server presents one when its AdmissionConfiguration names a kubeconfig for the webhook),
and then only to a writer who may list Pods in the namespace (a SubjectAccessReview,
cached per user and namespace for 30 s, 10 s when refused, at most 1 a second for all
users after a burst of 3); others read the finding without them. Without
--client-ca-file anyone who reaches the port could claim any user, so no finding names
Pods and no access is reviewed. With it, other callers are refused at the TLS handshake.

Idle connections are closed after 30 s, and at most 512 are served at once.

The certificate and key are re-read when the files change, so a rotated certificate is
served without a restart. Register the paths with a ValidatingWebhookConfiguration
(Services: failurePolicy Ignore; EndpointSlices: failurePolicy Fail with an
objectSelector on the managed-by label, sideEffects None; the controllers' slices in a
webhook of their own with failurePolicy Ignore, so that the controller keeps writing when
this one is down). 'sync --watch' takes the
same flags to serve the webhook from the watch loop's cache.`,
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
	// A long-running cache, as sync --watch's: not main's GC settings for
	// one-shot runs, which let the heap grow to five times what it keeps.
	daemon.TuneGC()
	go daemon.CollectWhenQuiet(ctx, daemon.QuietGCInterval)
	client, err := o.Clientset()
	if err != nil {
		return err
	}
	err = daemon.Run(ctx, daemon.Config{Client: client, Namespace: metav1.NamespaceAll,
		Webhook: o.Webhook.Webhook(o.Plan.options(), o.FieldManagers), Log: o.ErrOut, Requests: cluster.RequestsMade})
	return daemonError(metav1.NamespaceAll, metav1.NamespaceAll, err)
}
