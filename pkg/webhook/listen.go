package webhook

import (
	"crypto/tls"
)

// aeadSuites are the TLS 1.2 cipher suites the server accepts: ECDHE key
// exchange (forward secrecy) with an AEAD cipher. Go's defaults also accept
// the CBC-SHA1 ones, which are open to padding-oracle and Lucky13-style
// attacks; the API server, the webhook's only client, offers these AEAD
// suites (it is Go with the same defaults). TLS 1.3 suites are all AEAD and
// are not configurable in crypto/tls.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// tlsConfig serves the reloader's current certificate on every handshake,
// over TLS 1.3, or TLS 1.2 with aeadSuites only. With cas, every caller
// must present a client certificate that one of them signed, checked at the
// handshake against the current file: anyone else is refused before a byte
// of HTTP. The protocols are named here, not left to ServeTLS, since the
// per-handshake config is a copy of this one.
func tlsConfig(certs *CertReloader, cas *ClientCAs) *tls.Config {
	base := &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: aeadSuites, GetCertificate: certs.GetCertificate,
		NextProtos: []string{"h2", "http/1.1"}}
	if cas == nil {
		return base
	}
	base.ClientAuth = tls.RequireAndVerifyClientCert
	cfg := base.Clone()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool, err := cas.current()
		if err != nil {
			return nil, err
		}
		c := base.Clone()
		c.ClientCAs = pool
		return c, nil
	}
	return cfg
}
