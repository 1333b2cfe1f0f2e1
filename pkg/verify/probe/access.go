package probe

import (
	"context"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// rights are the rights each tier needs on kube-proxy's Pods.
type rights struct {
	// each is "" when allowed, else the missing right as the user grants
	// it ("create pods/exec in kube-system").
	proxy, forward, exec string
}

// preflight asks, with one SelfSubjectAccessReview per tier, which tiers
// the caller may use in ns. A review that fails leaves the tier to be
// tried: the API server then says Forbidden itself.
func preflight(ctx context.Context, client kubernetes.Interface, ns string) rights {
	check := func(verb, sub string) string {
		r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: verb, Resource: "pods", Subresource: sub}},
		}, metav1.CreateOptions{})
		if err != nil || r.Status.Allowed {
			return ""
		}
		return verb + " pods/" + sub + " in " + ns
	}
	return rights{proxy: check("get", "proxy"), forward: check("create", "portforward"), exec: check("create", "exec")}
}
