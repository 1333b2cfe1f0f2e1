package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// rbacKinds are the objects of `deploy` a test applies for real: the
// identity and its rights, not the workload (no kubelet runs here).
var rbacKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// deployObjects runs `kubectl slices deploy -o json ARGS...` and returns its
// objects.
func deployObjects(t testing.TB, cp *controlplane.ControlPlane, args ...string) []unstructured.Unstructured {
	t.Helper()
	r := kubectl(t, cp, append([]string{"slices", "deploy", "-o", "json"}, args...)...).mustCode(t, 0)
	var list unstructured.UnstructuredList
	if err := list.UnmarshalJSON([]byte(r.Stdout)); err != nil {
		t.Fatalf("deploy -o json: %v\n%s", err, r.Stdout)
	}
	return list.Items
}

// ofKinds keeps the objects of the given kinds, in order.
func ofKinds(objs []unstructured.Unstructured, kinds ...string) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, o := range objs {
		for _, k := range kinds {
			if o.GetKind() == k {
				out = append(out, o)
			}
		}
	}
	return out
}

// manifestFile writes objects as one v1 List for kubectl -f.
func manifestFile(t testing.TB, objs []unstructured.Unstructured) string {
	t.Helper()
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o.Object
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "manifests.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tokenKubeconfig mints a token for a ServiceAccount with the TokenRequest
// API (kubectl create token) and returns a kubeconfig holding only it.
func tokenKubeconfig(t testing.TB, cp *controlplane.ControlPlane, ns, sa string) string {
	t.Helper()
	r := kubectl(t, cp, "create", "token", sa, "-n", ns, "--duration", "1h").mustCode(t, 0)
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: sa\n  user: {token: %q}\ncontexts:\n- name: sa\n  context: {cluster: local, user: sa, namespace: %s}\ncurrent-context: sa\n",
		cp.URL, strings.TrimSpace(r.Stdout), ns)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitAccess waits until the API server's authorizer answers want for a
// ServiceAccount: RBAC changes reach it through its informers, a moment
// after the write.
func waitAccess(t testing.TB, cp *controlplane.ControlPlane, ns, sa, verb, group, resource, inNS string, want bool) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":" + sa
	within(t, fmt.Sprintf("%s may %s %s: %v", user, verb, resource, want), 10*time.Second, func() bool {
		r, err := cp.Admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: inNS, Verb: verb, Group: group, Resource: resource}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed == want
	})
}

// runBounded runs `kubectl slices ARGS...` as kubeconfig's user and waits
// for it to exit on its own within limit; a loop that hangs fails the test.
func runBounded(t testing.TB, cp *controlplane.ControlPlane, kubeconfig string, limit time.Duration, args ...string) (int, string) {
	t.Helper()
	w := startWatch(t, cp, kubeconfig, args...)
	select {
	case <-w.done:
	case <-time.After(limit):
		t.Fatalf("kubectl slices %s: still running after %v:\n%s", strings.Join(args, " "), limit, w.output())
	}
	code, _ := w.stop(t, 0)
	return code, w.output()
}

// loopArgs are the Deployment's container args, so that a test runs the
// loop as the manifests would (health on a free loopback port). A flag that
// sync --help does not list fails the test: the manifest would crash-loop.
func loopArgs(t testing.TB, cp *controlplane.ControlPlane, objs []unstructured.Unstructured) []string {
	t.Helper()
	spec := podSpecOf(t, objs)
	containers, _ := spec["containers"].([]any)
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	var args []string
	for _, a := range containers[0].(map[string]any)["args"].([]any) {
		args = append(args, a.(string))
	}
	help := kubectl(t, cp, "slices", "sync", "--help").mustCode(t, 0).Stdout
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, _ := strings.Cut(args[i], "=")
		if strings.HasPrefix(name, "--") && !strings.Contains(help, name+"=") && !strings.Contains(help, name+":") && !strings.Contains(help, name+" ") {
			t.Errorf("the manifest passes %s, which sync --help does not list", name)
			if !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // its value
			}
			continue
		}
		if name == "--health-addr" {
			// The manifests' :8080 is the Pod's own; here, a free loopback port.
			args[i] = "--health-addr=127.0.0.1:0"
		}
		out = append(out, args[i])
	}
	return out
}

// podSpecOf is the pod template's spec of the Deployment in objs.
func podSpecOf(t testing.TB, objs []unstructured.Unstructured) map[string]any {
	t.Helper()
	d := ofKinds(objs, "Deployment")
	if len(d) != 1 {
		t.Fatalf("%d Deployments", len(d))
	}
	spec, ok, err := unstructured.NestedMap(d[0].Object, "spec", "template", "spec")
	if !ok || err != nil {
		t.Fatalf("no pod template: %v", err)
	}
	return spec
}

// checkRestricted dry-run-creates a Pod with the Deployment's pod spec in
// ns, which enforces the restricted Pod Security Standard: the API server's
// PodSecurity admission judges Pods, not Deployments. The same spec without
// its security contexts must be refused, or the namespace proves nothing.
func checkRestricted(t testing.TB, cp *controlplane.ControlPlane, ns string, objs []unstructured.Unstructured) {
	t.Helper()
	labels := kubectl(t, cp, "get", "namespace", ns, "-o", "jsonpath={.metadata.labels}").mustCode(t, 0).Stdout
	if !strings.Contains(labels, `"pod-security.kubernetes.io/enforce":"restricted"`) {
		t.Fatalf("namespace %s does not enforce restricted: %s", ns, labels)
	}
	pod := func(spec map[string]any) string {
		p := unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "pss-check", "namespace": ns}, "spec": spec}}
		return manifestFile(t, []unstructured.Unstructured{p})
	}
	spec := podSpecOf(t, objs)
	kubectl(t, cp, "create", "--dry-run=server", "-f", pod(spec)).mustCode(t, 0)
	bare := runtimeCopy(spec)
	delete(bare, "securityContext")
	delete(bare["containers"].([]any)[0].(map[string]any), "securityContext")
	r := kubectl(t, cp, "create", "--dry-run=server", "-f", pod(bare))
	if r.Code == 0 || !strings.Contains(r.Stderr, "violates PodSecurity \"restricted") {
		t.Fatalf("a Pod without security contexts was not refused: exit %d %s", r.Code, r.Stderr)
	}
}

func runtimeCopy(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
