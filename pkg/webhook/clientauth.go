package webhook

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"sync"
)

// ClientCAs are the certificate authorities whose client certificates the
// server requires (--client-ca-file): the API server presents one to
// webhooks when its AdmissionConfiguration names a kubeconfig with a client
// certificate for the webhook's host. The file is re-read when its size or
// modification time changes, checked on every handshake as the serving
// pair is; a file that does not parse keeps the previous pool.
type ClientCAs struct {
	file string
	// OnReload, when set, is told of every reload and failed reload.
	OnReload func(err error)

	mu    sync.Mutex
	pool  *x509.CertPool
	stamp string
}

// NewClientCAs loads the file once; an error means it cannot start.
func NewClientCAs(file string) (*ClientCAs, error) {
	c := &ClientCAs{file: file}
	if _, err := c.current(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *ClientCAs) current() (*x509.CertPool, error) {
	stamp, err := fileStamp(c.file)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && stamp == c.stamp && c.pool != nil {
		return c.pool, nil
	}
	loaded := c.pool != nil
	if err == nil {
		var pem []byte
		if pem, err = os.ReadFile(c.file); err == nil {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				err = fmt.Errorf("no PEM certificate in it")
			} else {
				c.pool, c.stamp = pool, stamp
			}
		}
	}
	if c.OnReload != nil && loaded {
		c.OnReload(err)
	}
	if c.pool == nil {
		return nil, fmt.Errorf("load client CA file %s: %w", c.file, err)
	}
	return c.pool, nil
}

// callerKey marks a request's context with whether its caller presented a
// client certificate that the server verified against ClientCAs.
type callerKey struct{}

// withCaller records in ctx whether r's caller was verified: a client
// certificate checked at the TLS handshake against ClientCAs (without
// --client-ca-file no certificate is asked for, and no caller is).
func withCaller(ctx context.Context, r *http.Request) context.Context {
	verified := r.TLS != nil && len(r.TLS.VerifiedChains) > 0
	return context.WithValue(ctx, callerKey{}, verified)
}

// callerVerified says whether the request came from a caller whose client
// certificate was verified: only then is its AdmissionReview the API
// server's word, and its userInfo who wrote. Anyone who reaches the port
// can POST a review claiming any user, groups included.
func callerVerified(ctx context.Context) bool {
	v, _ := ctx.Value(callerKey{}).(bool)
	return v
}
