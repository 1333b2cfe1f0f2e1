package daemon

import (
	"fmt"
	"slices"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

// WebhookSettings are the admission webhook's settings as the command line
// gives them, to `webhook` and to `sync --watch`; errors name the flags.
type WebhookSettings struct {
	Addr, CertFile, KeyFile string
	// ClientCAFile makes callers present a client certificate it signed.
	ClientCAFile string
	// DenyOn are the Service findings that deny instead of warning.
	DenyOn []string
	// AllowUsers and AllowGroups may write our slices besides the field
	// managers of kubectl-slices' own writes.
	AllowUsers, AllowGroups []string
	// ControllerUsers alone may write slices under the controllers'
	// managed-by values: webhook.DefaultControllerUsers when nil, no one
	// guarded when empty (--controller-user="").
	ControllerUsers []string
}

// Validate checks the settings; required says the webhook is the command's
// whole point (standalone) rather than an addition to sync --watch, where
// none given means no webhook.
func (s WebhookSettings) Validate(required bool) error {
	set := s.Addr != "" || s.CertFile != "" || s.KeyFile != "" || s.ClientCAFile != "" || len(s.DenyOn) > 0 || len(s.AllowUsers) > 0 || len(s.AllowGroups) > 0 ||
		(s.ControllerUsers != nil && !slices.Equal(s.ControllerUsers, webhook.DefaultControllerUsers))
	if !required && !set {
		return nil
	}
	if s.Addr == "" || s.CertFile == "" || s.KeyFile == "" {
		return fmt.Errorf("the webhook needs --webhook-addr, --tls-cert-file and --tls-private-key-file")
	}
	if err := webhook.CheckAllowed(s.AllowUsers, s.AllowGroups); err != nil {
		return err
	}
	if err := webhook.CheckControllerUsers(s.ControllerUsers); err != nil {
		return err
	}
	if _, err := webhook.ParseKinds(s.DenyOn); err != nil {
		return fmt.Errorf("--deny-on: %w", err)
	}
	return nil
}

// Webhook is the daemon's webhook for settings that passed Validate: the
// handler judges Services with the planner's options and guards the slices
// of plan.ManagedBy, which fieldManagers (kubectl-slices' own writes) may
// write.
func (s WebhookSettings) Webhook(plan reconcile.Options, fieldManagers []string) *Webhook {
	denyOn, _ := webhook.ParseKinds(s.DenyOn) // Validate parsed them
	controllers := s.ControllerUsers
	if controllers == nil {
		controllers = webhook.DefaultControllerUsers
	}
	return &Webhook{Addr: s.Addr, CertFile: s.CertFile, KeyFile: s.KeyFile, ClientCAFile: s.ClientCAFile,
		Handler: &webhook.Handler{Plan: plan, DenyOn: denyOn,
			Guard: webhook.Guard{ManagedBy: plan.ManagedBy, FieldManagers: fieldManagers, Users: s.AllowUsers, Groups: s.AllowGroups,
				ControllerUsers: controllers}}}
}

// LoopWebhook is the webhook served beside the loop (sync --watch
// --webhook-addr): the loop's own writes pass its guard, by the loop's
// identity (learnt at start: AllowSelf) with kubectl-slices' field manager
// or the loop's own (--field-manager).
func (s WebhookSettings) LoopWebhook(plan reconcile.Options, fieldManager string) *Webhook {
	managers := []string{apply.FieldManager}
	if fieldManager != apply.FieldManager {
		managers = append(managers, fieldManager)
	}
	w := s.Webhook(plan, managers)
	w.AllowSelf = true
	return w
}
