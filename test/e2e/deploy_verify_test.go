package e2e

import (
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploy --verify's RBAC, applied to the API server and used through a
// token of the verifier's own ServiceAccount from the TokenRequest API:
// verify --watch starts on it and runs rounds; with the default tier a
// node's unread rules are UNKNOWN class forbidden, with every tier the
// node is read (here it does not answer: unreadable), never forbidden.
// The identity writes no EndpointSlice, and execs into kube-system's Pods
// only with the rules tier. The manifests pass server-side dry-run and the
// verifier's pod spec the restricted Pod Security Standard.
func TestDeployVerifierRBAC(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	proxyOnNode(t, "verify-rbac", "kube-proxy-rbac", map[string]string{"k8s-app": "kube-proxy"}, "192.0.2.3")
	user := "system:serviceaccount:" + ns + ":kubectl-slices-verify"
	may := func(verb, resource, sub, in string) bool {
		r, err := shared.Admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
				Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: in, Verb: verb, Resource: resource, Subresource: sub, Group: map[bool]string{true: "discovery.k8s.io"}[resource == "endpointslices"]}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	for _, c := range []struct{ name, tiers, class string }{{"DefaultTier", "healthz", "forbidden"}, {"EveryTier", "healthz,metrics,rules", "unreadable"}} {
		t.Run(c.name, func(t *testing.T) {
			objs := verifierObjects(deployObjects(t, shared, "--verify", "--verify-tiers", c.tiers, "-n", ns))
			kubectl(t, shared, "apply", "-f", manifestFile(t, ofKinds(objs, rbacKinds...))).mustCode(t, 0)
			t.Cleanup(func() {
				kubectl(t, shared, "delete", "--ignore-not-found", "-f", manifestFile(t, ofKinds(objs, rbacKinds...)))
			})
			if may("create", "endpointslices", "", ns) || may("delete", "endpointslices", "", "default") {
				t.Error("the verifier may write EndpointSlices")
			}
			if exec := may("create", "pods", "exec", "kube-system"); exec != strings.Contains(c.tiers, "rules") || may("create", "pods", "exec", ns) {
				t.Errorf("tiers %s: exec in kube-system %v; in %s %v", c.tiers, exec, ns, may("create", "pods", "exec", ns))
			}
			kubeconfig := tokenKubeconfig(t, shared, ns, "kubectl-slices-verify")
			addr := freeAddr(t)
			r := replica{startWatch(t, shared, kubeconfig, "verify", "--watch", "--all", "-A", "--node-timeout", "2s", "--health-addr", addr), addr}
			within(t, "/readyz after the first round, as the verifier's identity", 30*time.Second, func() bool {
				code, _ := r.get("/readyz")
				return code == http.StatusOK
			})
			if v := value(r.metrics(t), "kubectl_slices_dataplane_unknown_info", map[string]string{"target": "verify-rbac", "class": c.class}); v != 1 {
				t.Errorf("node verify-rbac: unknown_info{class=%s} %v, want 1\n%s", c.class, v, r.output())
			}
			if code, _ := r.stop(t, syscall.SIGTERM); code != 0 {
				t.Errorf("exit %d:\n%s", code, r.output())
			}
			if out := r.output(); strings.Contains(out, "cannot list") || strings.Contains(out, "no Events will be recorded") {
				t.Errorf("the verifier's rights fell short:\n%s", out)
			}
		})
	}
	objs := verifierObjects(deployObjects(t, shared, "--verify", "--verify-tiers", "healthz,metrics,rules", "-n", ns))
	kubectl(t, shared, "apply", "--dry-run=server", "-f", manifestFile(t, objs)).mustCode(t, 0)
	kubectl(t, shared, "apply", "-f", manifestFile(t, ofKinds(objs, "ServiceAccount"))).mustCode(t, 0)
	kubectl(t, shared, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted").mustCode(t, 0)
	checkRestricted(t, shared, ns, objs)
}

// verifierObjects are the verifier's objects among deploy's.
func verifierObjects(objs []unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/component"] == "verifier" {
			out = append(out, o)
		}
	}
	return out
}
