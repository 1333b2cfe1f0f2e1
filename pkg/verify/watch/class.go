package watch

import (
	"strings"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// UNKNOWN's reason classes: the label a dashboard groups by, each with a
// different remedy.
const (
	// ClassForbidden: the verifier lacks the right the deciding read needs
	// (grant it, or choose fewer tiers: then it is a choice).
	ClassForbidden = "forbidden"
	// ClassNotReady: the node is NotReady; its proxy is not read.
	ClassNotReady = "node-not-ready"
	// ClassNoProxy: no running service proxy Pod on the node, or one
	// verify does not read (Cilium, Calico, kube-router).
	ClassNoProxy = "no-proxy"
	// ClassUnreadable: a read was tried and did not answer in time or in
	// a form verify reads.
	ClassUnreadable = "unreadable"
)

// Class is an UNKNOWN node's reason class, from the reason that decided
// it (pkg/verify/verdict's: the rules tier's error when the rules were
// not read, or why no tier was tried, as pkg/verify/probe words it): a
// right denied is forbidden, whatever other tier was also denied.
func Class(n verdict.NodeRow) string {
	switch {
	case strings.HasPrefix(n.Reason, "forbidden"):
		return ClassForbidden
	case len(n.Tiers) > 0, strings.HasPrefix(n.Reason, "cannot"):
		return ClassUnreadable
	case strings.Contains(n.Reason, "NotReady"):
		return ClassNotReady
	}
	return ClassNoProxy
}

// replicaClass is an UNKNOWN DNS replica's: a right denied, or a read
// that failed (a Pod not Running, a port-forward, no answer).
func replicaClass(reason string) string {
	if strings.HasPrefix(reason, "forbidden") {
		return ClassForbidden
	}
	return ClassUnreadable
}
