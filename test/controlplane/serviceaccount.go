package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tokenLifetime outlives any test; the API server's minimum is 10 min.
const tokenLifetime int64 = 3600

// ServiceAccountKubeconfig gives a client an identity of its own: it
// creates the ServiceAccount namespace/name if missing, gets a token for it
// through the TokenRequest API (1 h) and writes a kubeconfig that reaches
// server (a proxy's URL; cp.URL when empty) as it, in namespace, without
// verifying the server's certificate (loopback, self-signed, as the other
// kubeconfigs). The API server, and so its audit log, names the user
// system:serviceaccount:NAMESPACE:NAME. It grants nothing: binding the
// rights is the caller's.
func (cp *ControlPlane) ServiceAccountKubeconfig(ctx context.Context, namespace, name, server string) (string, error) {
	if server == "" {
		server = cp.URL
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cp.Admin.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("service account %s/%s: %w", namespace, name, err)
	}
	lifetime := tokenLifetime
	tr, err := cp.Admin.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &lifetime}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for %s/%s: %w", namespace, name, err)
	}
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: %s\n  user: {token: %q}\ncontexts:\n- name: %s\n  context: {cluster: local, user: %s, namespace: %s}\ncurrent-context: %s\n",
		server, name, tr.Status.Token, name, name, namespace, name)
	path := filepath.Join(cp.Dir, fmt.Sprintf("sa-%s-%s.kubeconfig", namespace, name))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// ServiceAccountUser is the user the API server authenticates a
// ServiceAccount's token as.
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}
