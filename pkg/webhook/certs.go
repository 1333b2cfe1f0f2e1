package webhook

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CertReloader serves a certificate and key from files and re-reads them
// when either file's size or modification time changes, so a rotated
// certificate (a Secret volume updated by cert-manager or by hand) is served
// without a restart. A pair that does not load (one file written, the other
// not yet) keeps the previous certificate and is retried on the next
// handshake.
type CertReloader struct {
	certFile, keyFile string
	// OnReload, when set, is told of every load and failed reload.
	OnReload func(err error)

	handshakes atomic.Int64

	mu    sync.Mutex
	cert  *tls.Certificate
	stamp string
}

// NewCertReloader loads the pair once; an error means it cannot start.
func NewCertReloader(certFile, keyFile string) (*CertReloader, error) {
	r := &CertReloader{certFile: certFile, keyFile: keyFile}
	if _, err := r.current(); err != nil {
		return nil, err
	}
	return r, nil
}

// GetCertificate is tls.Config's hook; it stats the two files per handshake
// (cheap next to the handshake itself), and reloads on change.
func (r *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.handshakes.Add(1)
	return r.current()
}

// Handshakes is the number of TLS handshakes served: callers that keep
// their connections (the API server does) make few.
func (r *CertReloader) Handshakes() int64 { return r.handshakes.Load() }

func (r *CertReloader) current() (*tls.Certificate, error) {
	stamp, err := fileStamp(r.certFile, r.keyFile)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil && stamp == r.stamp && r.cert != nil {
		return r.cert, nil
	}
	if err == nil {
		var c tls.Certificate
		c, err = tls.LoadX509KeyPair(r.certFile, r.keyFile)
		if err == nil {
			r.cert, r.stamp = &c, stamp
		}
	}
	if r.OnReload != nil && (err != nil || r.cert != nil) {
		r.OnReload(err)
	}
	if r.cert == nil {
		return nil, fmt.Errorf("load serving certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	return r.cert, nil
}

// fileStamp is the files' sizes and modification times: a change of
// either means the files were rewritten.
func fileStamp(files ...string) (string, error) {
	s := ""
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		s += fmt.Sprintf("%d/%s;", fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	}
	return s, nil
}
