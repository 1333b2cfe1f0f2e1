package printers

import (
	"errors"
	"testing"
)

// The election's notices, exactly.
func TestElectionLines(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ElectionLease("kube-system", "kubectl-slices", "pod-a_1234"), "leader election: lease kube-system/kubectl-slices as pod-a_1234"},
		{LeaseHeldBy("kube-system", "kubectl-slices", "pod-b_5678"), "lease kube-system/kubectl-slices is held by pod-b_5678"},
		{ElectionError("Failed to release lease", []any{"lock", "kube-system/kubectl-slices", "dangling"}, errors.New("etcdserver: request timed out")),
			"leader election: Failed to release lease lock=kube-system/kubectl-slices: etcdserver: request timed out"},
		{ElectionError("error retrieving resource lock", nil, nil), "leader election: error retrieving resource lock"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
