package cmd

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-slices/kubectl-slices/pkg/daemon"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// WebhookFlags are the admission webhook's flags, on `webhook` and on
// `sync --watch`.
type WebhookFlags struct {
	Addr, CertFile, KeyFile string
	DenyOn                  []string
	AllowUsers, AllowGroups []string
	denyOn                  map[webhook.Kind]bool
}

func addWebhookFlags(cmd *cobra.Command, w *WebhookFlags) {
	cmd.Flags().StringVar(&w.Addr, "webhook-addr", "", "Serve the validating admission webhook on HOST:PORT (HTTPS)")
	cmd.Flags().StringVar(&w.CertFile, "tls-cert-file", "", "The webhook's serving certificate (PEM); re-read when it changes")
	cmd.Flags().StringVar(&w.KeyFile, "tls-private-key-file", "", "The webhook's private key (PEM); re-read when it changes")
	cmd.Flags().StringSliceVar(&w.DenyOn, "deny-on", nil, "Service findings that deny the write instead of warning (comma-separated, e.g. NoPods,PortNotFound)")
	cmd.Flags().StringSliceVar(&w.AllowUsers, "allow-user", nil, "Users (as the API server authenticates them, e.g. system:serviceaccount:NS:NAME) allowed to write our EndpointSlices with kubectl-slices' field manager")
	cmd.Flags().StringSliceVar(&w.AllowGroups, "allow-group", nil, "Groups (e.g. system:masters, or your operators' group) whose members may write our EndpointSlices with kubectl-slices' field manager")
}

// validate checks the flags; required says the webhook is the command's
// whole point (standalone) rather than an addition to sync --watch.
func (w *WebhookFlags) validate(required bool) error {
	set := w.Addr != "" || w.CertFile != "" || w.KeyFile != "" || len(w.DenyOn) > 0 || len(w.AllowUsers) > 0 || len(w.AllowGroups) > 0
	if !required && !set {
		return nil
	}
	if w.Addr == "" || w.CertFile == "" || w.KeyFile == "" {
		return exit.Usagef("the webhook needs --webhook-addr, --tls-cert-file and --tls-private-key-file")
	}
	if err := webhook.CheckAllowed(w.AllowUsers, w.AllowGroups); err != nil {
		return exit.Usagef("%v", err)
	}
	var err error
	if w.denyOn, err = webhook.ParseKinds(w.DenyOn); err != nil {
		return exit.Usagef("--deny-on: %v", err)
	}
	return nil
}

// config is the daemon's webhook: the handler judges Services with the
// planner's options and guards the slices of plan.ManagedBy, which the
// fieldManagers (kubectl-slices' own writes) may write.
func (w *WebhookFlags) config(plan PlanFlags, fieldManagers []string) *daemon.Webhook {
	return &daemon.Webhook{Addr: w.Addr, CertFile: w.CertFile, KeyFile: w.KeyFile,
		Handler: &webhook.Handler{Plan: plan.options(), DenyOn: w.denyOn,
			Guard: webhook.Guard{ManagedBy: plan.ManagedBy, FieldManagers: fieldManagers, Users: w.AllowUsers, Groups: w.AllowGroups}}}
}
