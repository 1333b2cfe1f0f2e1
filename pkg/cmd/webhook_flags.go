package cmd

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// WebhookFlags are the admission webhook's flags, on `webhook` and on
// `sync --watch`.
type WebhookFlags = daemon.WebhookSettings

func addWebhookFlags(cmd *cobra.Command, w *WebhookFlags) {
	cmd.Flags().StringVar(&w.Addr, "webhook-addr", "", "Serve the validating admission webhook on HOST:PORT (HTTPS)")
	cmd.Flags().StringVar(&w.CertFile, "tls-cert-file", "", "The webhook's serving certificate (PEM); re-read when it changes")
	cmd.Flags().StringVar(&w.KeyFile, "tls-private-key-file", "", "The webhook's private key (PEM); re-read when it changes")
	cmd.Flags().StringVar(&w.ClientCAFile, "client-ca-file", "", "Require a client certificate signed by a CA in this file (PEM) of every caller, as the API server presents with an AdmissionConfiguration; re-read when it changes. Without it, Service warnings name no Pods")
	cmd.Flags().StringSliceVar(&w.DenyOn, "deny-on", nil, "Service findings that deny the write instead of warning (comma-separated, e.g. NoPods,PortNotFound)")
	cmd.Flags().StringSliceVar(&w.AllowUsers, "allow-user", nil, "Users (as the API server authenticates them, e.g. system:serviceaccount:NS:NAME) allowed to write our EndpointSlices with kubectl-slices' field manager")
	cmd.Flags().StringSliceVar(&w.AllowGroups, "allow-group", nil, "Groups (e.g. system:masters, or your operators' group) whose members may write our EndpointSlices with kubectl-slices' field manager")
	cmd.Flags().StringSliceVar(&w.ControllerUsers, "controller-user", webhook.DefaultControllerUsers, "Users (as the API server authenticates them) who alone may write EndpointSlices labelled with kube-controller-manager's managed-by values; an empty value leaves those unguarded")
}
