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
