package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// The webhook's flag mistakes are usage errors, caught before any request.
func TestWebhookUsageErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	tls := []string{"--webhook-addr", "127.0.0.1:0", "--tls-cert-file", "/nonexistent/tls.crt", "--tls-private-key-file", "/nonexistent/tls.key"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"webhook"}, "the webhook needs --webhook-addr, --tls-cert-file and --tls-private-key-file"},
		{[]string{"webhook", "--webhook-addr", ":8443"}, "the webhook needs"},
		{append([]string{"webhook", "--deny-on", "NoPods,Typo"}, tls...), `--deny-on: unknown finding "Typo"`},
		{append([]string{"webhook"}, tls...), "load serving certificate /nonexistent/tls.crt"},
		{append([]string{"sync", "--all"}, tls...), "add --watch, or run 'kubectl slices webhook'"},
		{[]string{"sync", "--all", "--watch", "--webhook-addr", ":8443"}, "the webhook needs"},
	}
	for _, c := range cases {
		_, errOut, code := runCmd(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, ExitUsage, c.want)
		}
	}
}
