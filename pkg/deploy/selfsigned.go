package deploy

import (
	"fmt"

	"k8s.io/client-go/util/cert"
)

// SelfSignedTLS makes a CA and a serving certificate it signs for the
// webhook's Service (client-go util/cert: one year). The CA's key is not
// kept: running deploy again issues a new pair, which kubectl apply rolls out.
func SelfSignedTLS(ns string) (TLS, error) {
	names := WebhookDNSNames(ns)
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(names[0], nil, names[1:])
	if err != nil {
		return TLS{}, fmt.Errorf("generate the webhook's certificate: %w", err)
	}
	// The serving certificate comes first, then the CA that signed it.
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil || len(certs) != 2 {
		return TLS{}, fmt.Errorf("generate the webhook's certificate: %d certificates (%v)", len(certs), err)
	}
	ca, err := cert.EncodeCertificates(certs[1])
	if err != nil {
		return TLS{}, err
	}
	return TLS{CertPEM: certPEM, KeyPEM: keyPEM, CABundle: ca}, nil
}
