package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// webhookCluster starts a control plane of the test's own whose API server
// presents a client certificate to webhooks (an AdmissionConfiguration), as
// a cluster set up for --client-ca-file does; the webhook's flag names
// cp.WebhookClient.CAFile (clientCAFlag).
func webhookCluster(t testing.TB, ctx context.Context) *controlplane.ControlPlane {
	t.Helper()
	cp, err := controlplane.Start(ctx, controlplane.Options{WebhookClientCert: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	if err := createNodes(ctx, cp); err != nil {
		t.Fatal(err)
	}
	return cp
}

// clientCAFlag makes the webhook require the API server's client
// certificate, on a cluster from webhookCluster.
func clientCAFlag(cp *controlplane.ControlPlane) []string {
	return []string{"--client-ca-file", cp.WebhookClient.CAFile}
}

// writeServingCert writes a serving certificate for 127.0.0.1, signed by a
// fresh self-signed CA (client-go's util/cert), to dir/tls.crt and
// dir/tls.key, and returns the PEM chain for the caBundle.
func writeServingCert(t testing.TB, dir string) []byte {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Key first, then the certificate: a reader in between keeps the old
	// pair (the key does not match the old certificate).
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certPEM
}

// servedCert returns the leaf certificate the webhook serves, verified
// against caBundle for 127.0.0.1.
func servedCert(addr string, caBundle []byte) (*x509.Certificate, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caBundle)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// registerWebhook registers (or updates) the ValidatingWebhookConfiguration
// a deployment would: Services fail open, our EndpointSlices fail closed
// and only our slices (objectSelector) reach the webhook.
func registerWebhook(t testing.TB, cp *controlplane.ControlPlane, addr string, caBundle []byte) {
	t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	ignore, fail := admissionregistrationv1.Ignore, admissionregistrationv1.Fail
	timeout := int32(5)
	url := func(path string) admissionregistrationv1.WebhookClientConfig {
		u := fmt.Sprintf("https://%s%s", addr, path)
		return admissionregistrationv1.WebhookClientConfig{URL: &u, CABundle: caBundle}
	}
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	rule := func(group, resource string) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}
	}
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "kubectl-slices"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "services.kubectl-slices.io", ClientConfig: url("/validate/services"), Rules: rule("", "services"),
				FailurePolicy: &ignore, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"}},
			{Name: "endpointslices.kubectl-slices.io", ClientConfig: url("/validate/endpointslices"), Rules: rule(discovery.GroupName, "endpointslices"),
				FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, AdmissionReviewVersions: []string{"v1"},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{discovery.LabelManagedBy: "kubectl-slices"}}},
		},
	}
	ctx := context.Background()
	api := cp.Admin.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	old, err := api.Get(ctx, cfg.Name, metav1.GetOptions{})
	if err == nil {
		cfg.ResourceVersion = old.ResourceVersion
		_, err = api.Update(ctx, cfg, metav1.UpdateOptions{})
	} else {
		_, err = api.Create(ctx, cfg, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// applyYAML writes manifest to a file and runs kubectl apply -f on it.
func applyYAML(t testing.TB, cp *controlplane.ControlPlane, manifest string, extra ...string) result {
	t.Helper()
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return kubectl(t, cp, append([]string{"apply", "-f", f}, extra...)...)
}

func serviceYAML(ns, name, selector, targetPort string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %s, namespace: %s}
spec:
  selector: {%s}
  ports: [{name: http, port: 80, targetPort: %s}]
`, name, ns, selector, targetPort)
}
