package controller

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// Every API call the loop makes is granted by the RBAC `kubectl slices
// deploy` prints and asked about at start-up, so that a missing rule is
// named when the loop starts rather than failing a sync later. The case
// here: a Service that lost its selector while its Endpoints object, written
// by kube-controller-manager's Endpoints controller, stays behind. That
// object is cached emptied and read whole (GET) to be mirrored.
func TestLoopCallsAreGrantedAndChecked(t *testing.T) {
	ep := endpointsObj("was-selected", "10.0.0.1")
	ep.Labels = map[string]string{endpoints.LabelManagedBy: endpoints.ControllerManagedBy}
	c, client, _ := started(t, everything, service("was-selected", nil), ep)
	syncUntil(t, c, testNS+"/was-selected")
	if got := strings.Join(oursIn(t, client), ","); got != "10.0.0.1+" {
		t.Fatalf("mirrored %q, want 10.0.0.1+", got)
	}
	granted := map[string]bool{}
	for _, r := range deploy.Rights {
		granted[r.Verb+" "+r.Resource+"."+r.Group] = true
	}
	checked := map[string]bool{}
	for _, a := range client.Actions() {
		if a.GetResource().Resource != "selfsubjectaccessreviews" {
			continue
		}
		ra := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).Spec.ResourceAttributes
		checked[ra.Verb+" "+ra.Resource+"."+ra.Group] = true
	}
	for _, a := range client.Actions() {
		r := a.GetResource()
		if r.Resource == "selfsubjectaccessreviews" {
			continue
		}
		call := a.GetVerb() + " " + r.Resource + "." + r.Group
		if !granted[call] {
			t.Errorf("the loop calls %q, which deploy's RBAC does not grant", call)
		}
		if !checked[call] {
			t.Errorf("the loop calls %q without checking the right at start-up", call)
		}
	}
}
