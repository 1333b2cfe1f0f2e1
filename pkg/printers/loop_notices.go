package printers

import (
	"fmt"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// The loop's notices: remarks about the run as a whole or one Service,
// printed as LoopNotice lines.

// LoopWatching says the caches have filled for namespace ("" for all).
func LoopWatching(namespace string) string {
	scope := "every namespace"
	if namespace != "" {
		scope = "namespace " + namespace
	}
	return "watching " + scope + "; caches filled"
}

// LoopEndpointsUnreadable says what a loop that may not read Endpoints
// (denied: the verb refused) does without them.
func LoopEndpointsUnreadable(denied string) string {
	return "Endpoints are not readable with these credentials (cannot " + denied + "): selectorless Services are not mirrored"
}

// LoopNodesUnreadable says what a loop that may not read Nodes (denied:
// the verb refused) does without them.
func LoopNodesUnreadable(denied string) string {
	return "Nodes are not readable with these credentials (cannot " + denied +
		"): zones are unknown and kept from the live slices, and no Pod is dropped for its Node"
}

// LoopEventsUnwritable says what a loop that may not write Events (denied:
// the verb refused) does without them.
func LoopEventsUnwritable(denied string) string {
	return "Events are not writable with these credentials (cannot " + denied + " events): failed syncs are logged but not recorded on the Service"
}

// LoopServingHealth says where the probes and metrics are served.
func LoopServingHealth(addr string) string {
	return "serving /healthz, /readyz and /metrics on " + addr
}

// LoopStandingBy says a replica waits for the lease.
func LoopStandingBy() string { return "standing by: another replica holds the lease" }

// LoopLeading says a replica took the lease.
func LoopLeading() string { return "leading: writing from now on" }

// LoopControllerCurrent says kube-controller-manager's slices (n of them)
// publish what ours do: the Service can be handed back.
func LoopControllerCurrent(n int) string {
	return "kube-controller-manager's slices exist and are current (" + english.Plural(n, "slice", "slices") + ", same endpoints as ours)"
}

// LoopTakingOver says a standby writes a Service's slices, and why.
func LoopTakingOver(reason string) string {
	return "taking over from kube-controller-manager: " + reason
}

// LoopHandedBack says a standby deleted its slices (deleted of them) of a
// Service the controller serves again, and why.
func LoopHandedBack(deleted int, reason string) string {
	return fmt.Sprintf("handed back to kube-controller-manager (%d of ours deleted): %s", deleted, reason)
}

// LoopEndpointsAddresses is what a written Endpoints object holds.
func LoopEndpointsAddresses(ready, notReady int) string {
	return fmt.Sprintf("%d ready, %d not ready addresses", ready, notReady)
}
