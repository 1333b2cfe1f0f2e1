package webhook

import "crypto/tls"

// tlsConfig serves the reloader's current certificate on every handshake.
func tlsConfig(certs *CertReloader) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
}
