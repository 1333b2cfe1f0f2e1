package daemon

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/controller"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
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
		if p := exit.Process("ops", "ops", err); exit.Code(p) != exit.API || err == nil || p.Error() != err.Error() {
			t.Errorf("without %s: the command reports %v (exit %d), want it as it is, an API error", missing, p, exit.Code(p))
		}
	}
}

func TestIdentitiesDiffer(t *testing.T) {
	if id1, id2 := identity(), identity(); id1 == id2 || !strings.Contains(id1, "_") {
		t.Errorf("identities %q and %q: want hostname_random, distinct", id1, id2)
	}
}

// A release the API server refuses is said, as one notice naming the
// error: client-go's elector says it only in its (silenced) logs, and the
// standbys then wait out the lease instead of taking over at once.
func TestReleaseFailureIsReported(t *testing.T) {
	l := Lease{Name: "kubectl-slices", Namespace: "ops", LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond}
	client := fake.NewClientset()
	client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = true
		return true, r, nil
	})
	// Renewals succeed; the release (no holder) is refused.
	client.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if lease := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease); lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	var out syncBuffer
	e, err := newElection(context.Background(), client, l, nil, nil, controller.NewReporter(&out, &out, false))
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	select {
	case <-e.Leading:
	case <-time.After(5 * time.Second):
		t.Fatal("never led")
	}
	if lost := e.Release(); lost {
		t.Error("Release reported a lost lease")
	}
	if got := out.String(); !strings.Contains(got, "leader election: Failed to release lease") || !strings.Contains(got, "etcdserver: request timed out") {
		t.Errorf("output %q: want a notice of the failed release with its error", got)
	}
}
