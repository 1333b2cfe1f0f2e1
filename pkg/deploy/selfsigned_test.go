package deploy

import (
	"crypto/x509"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
)

// The generated serving certificate verifies against the caBundle for the
// webhook Service's DNS names.
func TestSelfSignedTLS(t *testing.T) {
	tls, err := SelfSignedTLS("ops")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(tls.CABundle) {
		t.Fatal("caBundle holds no certificate")
	}
	certs, err := cert.ParseCertsPEM(tls.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kubectl-slices-webhook.ops.svc", "kubectl-slices-webhook.ops.svc.cluster.local"} {
		if _, err := certs[0].Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: time.Now().Add(300 * 24 * time.Hour),
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{DNSName: "kubectl-slices-webhook.other.svc", Roots: pool}); err == nil {
		t.Error("the certificate verifies for another namespace")
	}
}
