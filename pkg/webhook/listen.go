package webhook

import (
	"crypto/tls"
	"fmt"
	"net"
)

func tlsConfig(certs *CertReloader) *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}
}

// listen binds addr before serving, so a taken port is an error at start
// and ":0" tells the caller the port it got.
func listen(addr string, cfg *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("webhook: listen on %s: %w", addr, err)
	}
	return tls.NewListener(ln, cfg), nil
}
