package cmd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/util/cert"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
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
		{append([]string{"webhook", "--allow-group", "system:authenticated"}, tls...), "--allow-group system:authenticated would let every authenticated user write our EndpointSlices"},
		{append([]string{"sync", "--all", "--watch", "--allow-group", "system:serviceaccounts"}, tls...), "every ServiceAccount of the cluster"},
		{append([]string{"webhook", "--allow-user", "alice,,bob"}, tls...), "--allow-user must name a user"},
		{[]string{"deploy", "--webhook", "--allow-group", "system:unauthenticated"}, "every anonymous request"},
		{[]string{"deploy", "--allow-group", "ops"}, "--allow-user and --allow-group go with --webhook"},
		{append([]string{"webhook", "--controller-user", "system:kube-controller-manager,"}, tls...), "--controller-user must name a user"},
		{[]string{"sync", "--all", "--watch", "--controller-user", "kcm"}, "the webhook needs"},
		{[]string{"deploy", "--controller-user", "kcm"}, "--controller-user goes with --webhook"},
		{[]string{"deploy", "--webhook", "--controller-user", "kcm,,x"}, "--controller-user must name a user"},
		{[]string{"sync", "--all", "--client-ca-file", "/nonexistent/ca.crt"}, "add --watch, or run 'kubectl slices webhook'"},
		{[]string{"deploy", "--webhook", "--webhook-client-ca", "/nonexistent/ca.crt"}, "--webhook-client-ca: open /nonexistent/ca.crt"},
		{[]string{"deploy", "--webhook-source", "10.0.0.0/24"}, "--webhook-source goes with --webhook"},
	}
	for _, c := range cases {
		_, errOut, code := runCmd(t, c.args...)
		if code != exit.Usage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, exit.Usage, c.want)
		}
	}
}

// A --webhook-addr already taken is a usage error, found before the caches
// or the loop start: no API request is made (the API server here refuses
// every connection, which would be exit 4).
func TestWebhookAddrTaken(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u, namespace: default}\ncurrent-context: c\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(crt, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tls := []string{"--webhook-addr", taken.Addr().String(), "--tls-cert-file", crt, "--tls-private-key-file", key}
	// A client CA file that cannot be read is found first, as the serving
	// pair would be.
	noCA := append([]string{"webhook", "--client-ca-file", filepath.Join(dir, "none.crt")}, tls...)
	if _, errOut, code := runCmd(t, noCA...); code != exit.Usage || !strings.Contains(errOut, "--client-ca-file: load client CA file "+filepath.Join(dir, "none.crt")) {
		t.Errorf("a missing --client-ca-file: exit %d, stderr %q", code, errOut)
	}
	for _, args := range [][]string{
		append([]string{"webhook"}, tls...),
		append([]string{"sync", "--all", "--watch", "--summary-interval=0"}, tls...),
	} {
		_, errOut, code := runCmd(t, args...)
		if code != exit.Usage || !strings.Contains(errOut, "--webhook-addr "+taken.Addr().String()) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming --webhook-addr", args[:2], code, errOut, exit.Usage)
		}
	}
}
