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

// roleUser makes a ServiceAccount named name whose only rights are a Role
// of the namespace with rules, and returns a kubeconfig with its token
// from the TokenRequest API.
func roleUser(t *testing.T, cp *controlplane.ControlPlane, ns, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cp.Admin.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Admin.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}
	if _, err := cp.Admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tok, err := cp.Admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: %s\n  user: {token: %q}\ncontexts:\n- name: %s\n  context: {cluster: local, user: %s, namespace: %s}\ncurrent-context: %s\n",
		cp.URL, name, tok.Status.Token, name, name, ns, name)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeFile writes s to a fresh file and returns its path.
func writeFile(t *testing.T, name, s string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// The guard decides by who writes, as the API server authenticated it: a
// user whose only rights are a namespace Role allowing writes to
// EndpointSlices cannot write ours by naming our field manager (patch,
// create, server-side apply), while the loop's ServiceAccount (a
// TokenRequest token) and an allowed group's member (the admin, in
// system:masters) can. And Service warnings name Pods, labels and ports
// only to a writer who may list Pods in the namespace.
func TestWebhookIdentity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := webhookCluster(t, ctx)
	objs := deployObjects(t, cp, "--webhook")
	kubectl(t, cp, "apply", "-f", manifestFile(t, ofKinds(objs, rbacKinds...))).mustCode(t, 0)
	const loopNS, loopSA = "kubectl-slices", "kubectl-slices"
	loop := tokenKubeconfig(t, cp, loopNS, loopSA)

	ns := newNamespace(t, cp)
	mustPods(t, cp, ns, podSpec("web", 0, 8), podSpec("web", 1, 8), podSpec("web", 2, 8))
	mustService(t, cp, service(ns, "web"))
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
	ours := listSlices(t, cp, ns, "web", "kubectl-slices")
	if len(ours) != 1 {
		t.Fatalf("%d slices of ours", len(ours))
	}
	foreign := copySlice(t, cp, ours[0], "web-foreign", "someone-else", nil)

	sliceWriter := []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "create", "update", "patch"}}}
	editor := roleUser(t, cp, ns, "editor", sliceWriter)
	svcWriter := roleUser(t, cp, ns, "svc-writer", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}}})
	podReader := roleUser(t, cp, ns, "pod-reader", []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}})
	waitAccess(t, cp, ns, "editor", "patch", "discovery.k8s.io", "endpointslices", ns, true)
	waitAccess(t, cp, ns, "svc-writer", "create", "", "services", ns, true)
	waitAccess(t, cp, ns, "pod-reader", "list", "", "pods", ns, true)
	waitAccess(t, cp, ns, "svc-writer", "list", "", "pods", ns, false)

	dir := t.TempDir()
	ca := writeServingCert(t, dir)
	addr := freeAddr(t)
	w := startWatch(t, cp, cp.Kubeconfig, "webhook", "--webhook-addr", addr, "--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key",
		"--allow-user", "system:serviceaccount:"+loopNS+":"+loopSA, "--allow-group", "system:masters", "--client-ca-file", cp.WebhookClient.CAFile)
	w.waitLine(t, "caches filled", 30*time.Second)
	registerWebhook(t, cp, addr, ca)
	within(t, "the webhook to be called", 20*time.Second, func() bool {
		return strings.Contains(applyYAML(t, cp, serviceYAML(ns, "probe", "app: Web", "http"), "--dry-run=server").Stderr, "Warning: kubectl-slices")
	})

	t.Run("field manager is not an identity", func(t *testing.T) {
		fieldManagerIsNotAnIdentity(t, cp, ns, editor, loop, ours[0].Name, foreign.Name)
	})

	t.Run("Pod data only for Pod readers", func(t *testing.T) {
		podDataOnlyForPodReaders(t, cp, ns, svcWriter, podReader)
	})

	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("webhook exit code %d:\n%s", code, w.output())
	}
	t.Log(w.output())

	// sync --watch serving the webhook, run as the loop's ServiceAccount
	// with no --allow-user: the API server tells it who it is, and its
	// own writes pass; the editor's still do not.
	t.Run("sync --watch allows itself", func(t *testing.T) {
		sw := startWatch(t, cp, loop, "sync", "--all", "-n", ns, "--watch", "--webhook-addr", addr,
			"--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key")
		sw.waitLine(t, "webhook: our slices may be written by system:serviceaccount:"+loopNS+":"+loopSA+" (this process)", 30*time.Second)
		sw.waitLine(t, "webhook: caches filled", 30*time.Second)
		mustPods(t, cp, ns, podSpec("web", 5, 8))
		within(t, "the loop to publish web-5", 20*time.Second, func() bool {
			return len(endpointAddresses(listSlices(t, cp, ns, "web", "kubectl-slices"))) == 6
		})
		r := kubectl(t, cp, "--kubeconfig", editor, "patch", "endpointslice", ours[0].Name, "-n", ns, "--type=merge", "-p", `{"endpoints":[]}`, "--field-manager=kubectl-slices")
		if r.Code == 0 || !strings.Contains(r.Stderr, "is not one of them") {
			t.Errorf("the editor's patch under sync --watch's webhook: code %d\n%s", r.Code, r.Stderr)
		}
		if code, _ := sw.stop(t, syscall.SIGTERM); code != 0 {
			t.Fatalf("sync --watch exit code %d:\n%s", code, sw.output())
		}
		if strings.Contains(sw.output(), "denied the request") {
			t.Errorf("the loop's own writes were refused:\n%s", sw.output())
		}
	})
}

// fieldManagerIsNotAnIdentity: the editor, allowed by RBAC to write slices,
// is refused on ours whatever its field manager (patch, create and
// server-side apply with our label), while the loop's ServiceAccount and an
// allowed group's member write.
func fieldManagerIsNotAnIdentity(t *testing.T, cp *controlplane.ControlPlane, ns, editor, loop, ourName, foreignName string) {
	as := func(args ...string) result {
		return kubectl(t, cp, append([]string{"--kubeconfig", editor}, args...)...)
	}
	// The Role does allow the write: a slice of another manager is
	// patched.
	as("patch", "endpointslice", foreignName, "-n", ns, "--type=merge", "-p", `{"metadata":{"labels":{"touched":"yes"}}}`, "--field-manager=kubectl-slices").mustCode(t, 0)
	refused := func(what string, r result) {
		t.Helper()
		t.Logf("%s:\n%s", what, r.Stderr)
		if r.Code == 0 || !strings.Contains(r.Stderr, "denied the request") ||
			!strings.Contains(r.Stderr, "system:serviceaccount:"+ns+":editor is not one of them, whatever its field manager") {
			t.Errorf("%s: code %d, stderr:\n%s", what, r.Code, r.Stderr)
		}
	}
	refused("patch of our slice", as("patch", "endpointslice", ourName, "-n", ns, "--type=merge", "-p", `{"endpoints":[]}`, "--field-manager=kubectl-slices"))
	forged := fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-forged
  namespace: %s
  labels: {endpointslice.kubernetes.io/managed-by: kubectl-slices, kubernetes.io/service-name: web}
addressType: IPv4
endpoints: [{addresses: [10.66.6.6]}]
ports: [{name: http, port: 8080, protocol: TCP}]
`, ns)
	f := writeFile(t, "forged.yaml", forged)
	refused("create with our label", as("create", "-f", f, "--field-manager=kubectl-slices"))
	refused("server-side apply with our label", as("apply", "--server-side", "-f", f, "--field-manager=kubectl-slices"))
	got := listSlices(t, cp, ns, "web", "kubectl-slices")
	if len(got) != 1 || len(got[0].Endpoints) != 3 {
		t.Fatalf("our slices after the refused writes: %+v", got)
	}

	// The loop's ServiceAccount, by its token, writes.
	mustPods(t, cp, ns, podSpec("web", 3, 8))
	if code, out := runBounded(t, cp, loop, 30*time.Second, "sync", "svc/web", "-n", ns); code != 0 {
		t.Fatalf("the loop's ServiceAccount was refused: exit %d\n%s", code, out)
	}
	if got := endpointAddresses(listSlices(t, cp, ns, "web", "kubectl-slices")); len(got) != 4 {
		t.Fatalf("after the loop's sync: %v", got)
	}
	// An allowed group's member (the admin) repairs with sync.
	mustPods(t, cp, ns, podSpec("web", 4, 8))
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if got := endpointAddresses(listSlices(t, cp, ns, "web", "kubectl-slices")); len(got) != 5 {
		t.Fatalf("after the admin's sync: %v", got)
	}
}

// podDataOnlyForPodReaders: the webhook's warnings name Pods only to a writer
// who may list them; to others they say the details are hidden.
func podDataOnlyForPodReaders(t *testing.T, cp *controlplane.ControlPlane, ns, svcWriter, podReader string) {
	typo := writeFile(t, "typo.yaml", serviceYAML(ns, "typo", "app: Web", "http"))
	noPort := writeFile(t, "noport.yaml", serviceYAML(ns, "noport", "app: web", "metrics"))
	create := func(kubeconfig, file string) string {
		r := kubectl(t, cp, "--kubeconfig", kubeconfig, "create", "-f", file, "--dry-run=server").mustCode(t, 0)
		return r.Stderr
	}
	hidden := "(details hidden: you may not list pods in " + ns + ")"
	out := create(svcWriter, typo)
	t.Logf("typo, as a Service writer:\n%s", out)
	if !strings.Contains(out, "Warning: kubectl-slices: service typo: selector app=Web matches no Pods in namespace "+ns+"; several Pods differ by one label "+hidden) ||
		strings.Contains(out, "web-0") || strings.Contains(out, "app=web") {
		t.Errorf("typo as a writer who may not list Pods:\n%s", out)
	}
	out = create(svcWriter, noPort)
	t.Logf("missing port, as a Service writer:\n%s", out)
	if !strings.Contains(out, `targetPort "metrics" of port http is not declared by 5 of 5 Pods: they receive no traffic on it `+hidden) || strings.Contains(out, "web-") {
		t.Errorf("missing port as a writer who may not list Pods:\n%s", out)
	}
	out = create(podReader, typo)
	if !strings.Contains(out, "nearest miss: pod web-0 has app=web") || strings.Contains(out, "details hidden") {
		t.Errorf("typo as a writer who may list Pods:\n%s", out)
	}
	out = create(podReader, noPort)
	if !strings.Contains(out, "is not declared by 5 of 5 Pods (web-0, web-1, web-2 and 2 more)") {
		t.Errorf("missing port as a writer who may list Pods:\n%s", out)
	}
}
