package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// WebhookClientUser is the common name of the client certificate the API
// server presents to webhooks when Options.WebhookClientCert is set.
const WebhookClientUser = "kube-apiserver-webhook-client"

// WebhookClient are the files of the API server's webhook client
// certificate: the CA a webhook's --client-ca-file names, and the pair
// the API server presents (a test may present it too, as the API server).
type WebhookClient struct {
	CAFile, CertFile, KeyFile string
}

// writeWebhookClientAuth makes a CA and a client certificate it signs, and
// the AdmissionConfiguration whose webhook plugins present it to every
// webhook (the kubeconfig user "*"), as a cluster operator would; it
// returns the kube-apiserver flag that reads it.
func (cp *ControlPlane) writeWebhookClientAuth() ([]string, error) {
	dir := filepath.Join(cp.Dir, "webhook-client")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "webhook-client-ca"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: WebhookClientUser},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	w := WebhookClient{CAFile: filepath.Join(dir, "ca.crt"), CertFile: filepath.Join(dir, "client.crt"), KeyFile: filepath.Join(dir, "client.key")}
	files := map[string][]byte{
		w.CAFile:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		w.CertFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		w.KeyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	files[kubeconfig] = fmt.Appendf(nil, `apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, w.CertFile, w.KeyFile)
	admission := filepath.Join(dir, "admission.yaml")
	files[admission] = fmt.Appendf(nil, `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, kubeconfig, kubeconfig)
	for f, b := range files {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			return nil, err
		}
	}
	cp.WebhookClient = &w
	return []string{"--admission-control-config-file", admission}, nil
}
