package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// namespaceUser makes a ServiceAccount bound to a Role of the namespace
// (and nothing cluster-scoped) and returns a kubeconfig with its token from
// the TokenRequest API.
func namespaceUser(t *testing.T, cp *controlplane.ControlPlane, ns string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "watcher", Namespace: ns}}
	if _, err := cp.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "watcher", Namespace: ns}, Rules: rules}
	if _, err := cp.Admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "watcher", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "watcher"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "watcher", Namespace: ns}}}
	if _, err := cp.Admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tok, err := cp.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "watcher",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: watcher\n  user: {token: %q}\ncontexts:\n- name: watcher\n  context: {cluster: local, user: watcher, namespace: %s}\ncurrent-context: watcher\n",
		cp.URL, tok.Status.Token, ns)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A user with only a namespace Role keeps that namespace's slices current;
// zones are unknown and the output says so once.
func TestWatchNamespaceRole(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	var specs []controlplane.PodSpec
	want := expected{}
	for i := range 3 {
		s := podSpec("web", i, 42)
		specs = append(specs, s)
		want[s.IPs[0]] = "true:"
	}
	mustPods(t, shared, ns, specs...)
	kubeconfig := namespaceUser(t, shared, ns, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
	})
	// Without rights on Nodes, this user cannot list them.
	r := kubectl(t, shared, "get", "nodes", "--kubeconfig", kubeconfig)
	if r.Code == 0 {
		t.Fatal("the namespace user can list Nodes; the test proves nothing")
	}

	// A user without the rights gets one line naming what is missing
	// instead of informers retrying forever.
	r = slices(t, "sync", "--all", "-n", ns, "--watch", "--context", controlplane.LimitedContext).mustCode(t, 4)
	if !strings.Contains(r.Stderr, "forbidden: cannot list services") {
		t.Errorf("without rights: %q", r.Stderr)
	}

	w := startWatch(t, shared, kubeconfig, "sync", "--all", "--watch", "--summary-interval=0")
	within(t, "first sync", 10*time.Second, func() bool { return endpointState(t, shared, ns, "web") == want.String() })
	if err := shared.SetPodReady(ctx, ns, "web-0", false); err != nil {
		t.Fatal(err)
	}
	want[specs[0].IPs[0]] = "false:"
	within(t, "readiness flip", reflectLimit, func() bool { return endpointState(t, shared, ns, "web") == want.String() })
	w.waitLine(t, "pod web-0 not ready", 2*time.Second)
	code, _ := w.stop(t, syscall.SIGTERM)
	out := w.output()
	t.Logf("output:\n%s", out)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(out, "zones are unknown"); n != 1 {
		t.Errorf("said %d times that zones are unknown, want once", n)
	}
	if strings.Contains(out, "error") || strings.Contains(out, "forbidden") {
		t.Errorf("errors in the output")
	}
}
