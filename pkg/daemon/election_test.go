package daemon

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
)

// Without any one right the elector needs on the Lease, the loop names it
// as an API error, rather than retry silently forever as client-go's
// elector does; with all of them it starts.
func TestElectionNeedsLeaseRights(t *testing.T) {
	l := Lease{Name: "kubectl-slices", Namespace: "ops", LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	for _, missing := range []string{"get", "create", "update", ""} {
		client := fake.NewClientset()
		client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
			ra := r.Spec.ResourceAttributes
			r.Status.Allowed = !(ra.Resource == "leases" && ra.Group == "coordination.k8s.io" && ra.Namespace == "ops" && ra.Verb == missing)
			return true, r, nil
		})
		_, err := newElection(context.Background(), client, l, nil, nil, controller.NewReporter(io.Discard, io.Discard, false))
		if missing == "" {
			if err != nil {
				t.Errorf("every right granted: %v", err)
			}
			continue
		}
		var ae *APIError
		want := "forbidden: cannot " + missing + " leases.coordination.k8s.io in namespace ops"
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), want) {
			t.Errorf("without %s: got %v, want an APIError saying %q", missing, err, want)
		}
	}
}

func TestIdentitiesDiffer(t *testing.T) {
	if id1, id2 := identity(), identity(); id1 == id2 || !strings.Contains(id1, "_") {
		t.Errorf("identities %q and %q: want hostname_random, distinct", id1, id2)
	}
}
