package printers

import "testing"

// The loop's notices, exactly: the e2e tests and users' log filters match
// on them.
func TestLoopNotices(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{LoopWatching(""), "watching every namespace; caches filled"},
		{LoopWatching("shop"), "watching namespace shop; caches filled"},
		{LoopEndpointsUnreadable("list"), "Endpoints are not readable with these credentials (cannot list): selectorless Services are not mirrored"},
		{LoopNodesUnreadable("watch"),
			"Nodes are not readable with these credentials (cannot watch): zones are unknown and kept from the live slices, and no Pod is dropped for its Node"},
		{LoopEventsUnwritable("create"),
			"Events are not writable with these credentials (cannot create events): failed syncs are logged but not recorded on the Service"},
		{LoopServingHealth("[::]:8080"), "serving /healthz, /readyz and /metrics on [::]:8080"},
		{LoopStandingBy(), "standing by: another replica holds the lease"},
		{LoopLeading(), "leading: writing from now on"},
		{LoopControllerCurrent(1), "kube-controller-manager's slices exist and are current (1 slice, same endpoints as ours)"},
		{LoopControllerCurrent(3), "kube-controller-manager's slices exist and are current (3 slices, same endpoints as ours)"},
		{LoopTakingOver("its slices differ for 5s"), "taking over from kube-controller-manager: its slices differ for 5s"},
		{LoopHandedBack(2, "its slices are current for 30s"), "handed back to kube-controller-manager (2 of ours deleted): its slices are current for 30s"},
		{LoopEndpointsAddresses(3, 1), "3 ready, 1 not ready addresses"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
