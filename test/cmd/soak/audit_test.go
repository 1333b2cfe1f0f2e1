package main

import (
	"testing"
	"time"
)

const (
	userA = "system:serviceaccount:kubectl-slices:soak-a"
	userB = "system:serviceaccount:kubectl-slices:soak-b"
)

var testIDs = identities{Ours: []string{userA, userB}, Controller: "system:kube-controller-manager", Admin: "admin"}

func leaseWrite(user string, s float64) auditEvent {
	return auditEvent{Received: at(s), Time: at(s + 0.01), User: user, Verb: "update", Resource: "leases", Namespace: "kubectl-slices", Name: "kubectl-slices", Code: 200}
}

func sliceWrite(user, verb, ns, name string, s float64) auditEvent {
	return auditEvent{Received: at(s), Time: at(s + 0.01), User: user, Verb: verb, Resource: "endpointslices", Namespace: ns, Name: name, Code: 201}
}

// Terms follow the Lease's successful writes; a take-over sooner than the
// lease duration after the holder's last renewal is a violation (the old
// leader clearing a Lease its successor holds, for one).
func TestLeaseTerms(t *testing.T) {
	evs := []auditEvent{
		leaseWrite(userA, 0), leaseWrite(userA, 2), leaseWrite(userA, 4),
		{Received: at(5), User: userB, Verb: "update", Resource: "leases", Namespace: "kubectl-slices", Name: "kubectl-slices", Code: 409},
		leaseWrite(userB, 20), leaseWrite(userB, 22),
		leaseWrite(userA, 23), // the cut-off leader clears the Lease B holds
		leaseWrite(userB, 40),
		leaseWrite(userA, 100), // after the soak's stop: not judged
	}
	terms, bad := leaseTerms(evs, testIDs, "kubectl-slices", "kubectl-slices", 15*time.Second, at(90))
	if len(terms) != 4 || terms[0].User != userA || terms[0].Renewals != 2 || terms[1].Start != at(20) || terms[0].End != at(20) {
		t.Fatalf("terms: %+v", terms)
	}
	if len(bad) != 1 || bad[0].User != userA || bad[0].Holder != userB || bad[0].At != at(23) {
		t.Fatalf("violations: %+v", bad)
	}
	if h := holderAt(terms, at(21)); h == nil || h.User != userB {
		t.Errorf("holder at 21s: %+v", h)
	}
	if h := holderAt(terms, at(-1)); h != nil {
		t.Errorf("holder before any term: %+v", h)
	}
}

// A write by an identity outside its own terms overlaps another's; a
// handover is fine when the old leader's last write precedes the new
// one's first.
func TestOverlapsAndHandovers(t *testing.T) {
	terms := []term{{User: userA, Start: at(0), End: at(20)}, {User: userB, Start: at(20), End: at(60)}, {User: userA, Start: at(60)}}
	writes := []auditEvent{
		sliceWrite(userA, "create", "ns", "", 5),
		sliceWrite(userB, "update", "ns", "web-1", 21),
		sliceWrite(userA, "update", "ns", "web-1", 22), // cut off, still writing
		sliceWrite(userA, "update", "ns", "web-1", 61),
	}
	ov := overlaps(writes, terms)
	if len(ov) != 1 || ov[0].Write.Received != at(22) || ov[0].Holder != userB {
		t.Fatalf("overlaps: %+v", ov)
	}
	hs := handovers(writes, terms)
	if len(hs) != 2 || hs[0].OK() || hs[0].LastFrom != at(22) || hs[0].FirstTo != at(21) || !hs[1].OK() {
		t.Fatalf("handovers: %+v", hs)
	}
	if ov := overlaps([]auditEvent{sliceWrite(userA, "create", "ns", "", -1)}, terms); len(ov) != 1 || ov[0].Holder != "" {
		t.Errorf("a write before any term: %+v", ov)
	}
}

// Only successful writes of EndpointSlices by the given users count, and
// those inside an excluded window or outside the run are not judged.
func TestWritesWhileHealthy(t *testing.T) {
	evs := []auditEvent{
		sliceWrite(userA, "create", "ns", "", 10),
		sliceWrite(userA, "update", "ns", "a", 50),
		sliceWrite(testIDs.Controller, "update", "ns", "b", 51),
		{Received: at(52), User: userA, Verb: "update", Resource: "endpointslices", Namespace: "ns", Name: "a", Code: 409},
		{Received: at(53), User: userA, Verb: "get", Resource: "endpointslices", Namespace: "ns", Name: "a", Code: 200},
		leaseWrite(userA, 54),
		sliceWrite(userB, "delete", "ns", "a", 200),
	}
	ours := sliceWrites(evs, testIDs.ours)
	if len(ours) != 3 {
		t.Fatalf("our writes: %+v", ours)
	}
	got := writesWhileHealthy(ours, []window{{From: at(40), To: at(60)}}, at(0), at(100))
	if len(got) != 1 || got[0].Received != at(10) {
		t.Fatalf("writes while healthy: %+v", got)
	}
}
