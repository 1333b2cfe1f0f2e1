package watch

import (
	"strings"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// UNKNOWN's reason classes: the label a dashboard groups by, each with a
// different remedy.
const (
	// ClassForbidden: the verifier lacks a right a tier needs (grant it,
	// or choose fewer tiers).
	ClassForbidden = "forbidden"
	// ClassNotReady: the node is NotReady; its proxy is not read.
	ClassNotReady = "node-not-ready"
	// ClassNoProxy: no service proxy Pod on the node, or one verify does
	// not read (Cilium, Calico, kube-router).
	ClassNoProxy = "no-proxy"
	// ClassUnreadable: a tier was tried and did not answer in time or in a
	// form verify reads.
	ClassUnreadable = "unreadable"
	// ClassPlan: the slices could not be held against a plan.
	ClassPlan = "plan"
)

// Class is an UNKNOWN node's reason class, from the verdict's tiers: a
// tier denied is forbidden; a node with no tier tried is NotReady, has no
// proxy verify reads, or its proxies could not be listed (pkg/verify/probe
// words these reasons); otherwise a tier failed.
func Class(n verdict.NodeRow) string {
	for _, t := range n.Tiers {
		if !t.OK && strings.HasPrefix(t.Reason, "forbidden") {
			return ClassForbidden
		}
	}
	if len(n.Tiers) > 0 {
		return ClassUnreadable
	}
	switch {
	case strings.HasPrefix(n.Reason, "forbidden"):
		return ClassForbidden // the proxies could not be listed
	case strings.HasPrefix(n.Reason, "cannot"):
		return ClassUnreadable
	case strings.Contains(n.Reason, "NotReady"):
		return ClassNotReady
	}
	return ClassNoProxy
}
