package daemon

import (
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
	"github.com/kubectl-slices/kubectl-slices/pkg/webhook"
)

func TestWebhookSettingsValidate(t *testing.T) {
	ok := WebhookSettings{Addr: ":8443", CertFile: "tls.crt", KeyFile: "tls.key"}
	with := func(f func(*WebhookSettings)) WebhookSettings { s := ok; f(&s); return s }
	cases := []struct {
		name     string
		s        WebhookSettings
		required bool
		want     string
	}{
		{"none, beside the loop", WebhookSettings{}, false, ""},
		{"none, standalone", WebhookSettings{}, true, "needs --webhook-addr, --tls-cert-file and --tls-private-key-file"},
		{"complete", ok, true, ""},
		{"no key", with(func(s *WebhookSettings) { s.KeyFile = "" }), false, "needs --webhook-addr"},
		{"deny-on alone beside the loop", WebhookSettings{DenyOn: []string{"NoPods"}}, false, "needs --webhook-addr"},
		{"a known finding", with(func(s *WebhookSettings) { s.DenyOn = []string{"NoPods"} }), true, ""},
		{"an unknown finding", with(func(s *WebhookSettings) { s.DenyOn = []string{"Nope"} }), true, "--deny-on: "},
		{"default controller users beside the loop", WebhookSettings{ControllerUsers: webhook.DefaultControllerUsers}, false, ""},
		{"controller users alone beside the loop", WebhookSettings{ControllerUsers: []string{"kcm"}}, false, "needs --webhook-addr"},
		{"no controller users", with(func(s *WebhookSettings) { s.ControllerUsers = []string{} }), true, ""},
		{"an empty controller user", with(func(s *WebhookSettings) { s.ControllerUsers = []string{"kcm", ""} }), true, "--controller-user must name a user"},
		{"everyone allowed", with(func(s *WebhookSettings) { s.AllowGroups = []string{"system:authenticated"} }), true, "--allow-group system:authenticated"},
	}
	for _, c := range cases {
		err := c.s.Validate(c.required)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestWebhookSettingsWebhook(t *testing.T) {
	s := WebhookSettings{Addr: ":8443", CertFile: "c", KeyFile: "k", DenyOn: []string{"NoPods"}, AllowUsers: []string{"alice"}, AllowGroups: []string{"ops"}}
	plan := reconcile.DefaultOptions()
	plan.ManagedBy = "team-x"
	w := s.Webhook(plan, []string{"kubectl-slices"})
	g := w.Handler.Guard
	if w.Addr != ":8443" || w.CertFile != "c" || w.KeyFile != "k" || w.AllowSelf || !w.Handler.DenyOn[webhook.Kind("NoPods")] || len(w.Handler.DenyOn) != 1 ||
		g.ManagedBy != "team-x" || w.Handler.Plan.ManagedBy != "team-x" || strings.Join(g.FieldManagers, ",") != "kubectl-slices" ||
		strings.Join(g.Users, ",") != "alice" || strings.Join(g.Groups, ",") != "ops" {
		t.Errorf("%+v, guard %+v", w, g)
	}
	if strings.Join(g.ControllerUsers, ",") != strings.Join(webhook.DefaultControllerUsers, ",") {
		t.Errorf("controller users by default: %v", g.ControllerUsers)
	}
	s.ControllerUsers = []string{"kcm-x"}
	if got := s.Webhook(plan, nil).Handler.Guard.ControllerUsers; strings.Join(got, ",") != "kcm-x" {
		t.Errorf("controller users given: %v", got)
	}
	s.ControllerUsers = []string{}
	if got := s.Webhook(plan, nil).Handler.Guard.ControllerUsers; len(got) != 0 {
		t.Errorf("no controller users: %v", got)
	}
}

// Beside the loop, the loop's own writes pass the guard: its identity, and
// its field manager beside kubectl-slices' default.
func TestLoopWebhook(t *testing.T) {
	s := WebhookSettings{Addr: ":8443", CertFile: "tls.crt", KeyFile: "tls.key"}
	plan := reconcile.DefaultOptions()
	for _, c := range []struct{ fieldManager, want string }{
		{"kubectl-slices", "kubectl-slices"},
		{"ops-sync", "kubectl-slices ops-sync"},
	} {
		w := s.LoopWebhook(plan, c.fieldManager)
		if got := strings.Join(w.Handler.Guard.FieldManagers, " "); got != c.want || !w.AllowSelf {
			t.Errorf("--field-manager %s: field managers %q, allow self %v; want %q and true", c.fieldManager, got, w.AllowSelf, c.want)
		}
	}
}
