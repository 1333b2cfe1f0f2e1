package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Tokens are minted for tokenLifetime and replaced every tokenRefresh.
const (
	tokenLifetime = time.Hour
	tokenRefresh  = 20 * time.Minute
)

// tokenFile keeps a ServiceAccount's token in a file its kubeconfig names
// (tokenFile), refreshed before it expires, as the kubelet refreshes a
// Pod's projected token: client-go reads the file again every minute. The
// harness's kubeconfig carries one token of 1 h inline, shorter than a
// long soak.
type tokenFile struct {
	client      kubernetes.Interface
	path        string
	ns, account string
}

// newTokenFile moves the token of the kubeconfig at path into a file
// beside it, which the kubeconfig then names.
func newTokenFile(client kubernetes.Interface, path, ns, account string) (*tokenFile, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, err
	}
	t := &tokenFile{client: client, path: path + ".token", ns: ns, account: account}
	for _, u := range cfg.AuthInfos {
		if u.Token == "" {
			continue
		}
		if err := writeAtomic(t.path, []byte(u.Token)); err != nil {
			return nil, err
		}
		u.Token, u.TokenFile = "", t.path
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return nil, err
	}
	return t, nil
}

// refresh mints a new token every tokenRefresh until ctx ends.
func (t *tokenFile) refresh(ctx context.Context) {
	for sleep(ctx, tokenRefresh) {
		if err := t.mint(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "soak: token for %s/%s: %v (retrying in %s)\n", t.ns, t.account, err, tokenRefresh)
		}
	}
}

func (t *tokenFile) mint(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	secs := int64(tokenLifetime / time.Second)
	tr, err := t.client.CoreV1().ServiceAccounts(t.ns).CreateToken(ctx, t.account,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	return writeAtomic(t.path, []byte(tr.Status.Token))
}

// writeAtomic writes through a temporary file and a rename, so a reader
// never sees half a file.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
