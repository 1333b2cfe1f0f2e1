package main

import (
	"strings"
	"testing"
	"time"
)

// A change is dated by the admin's write of its object that the API
// server received between the churn's send and the answer; one missing
// from the log by the send.
func TestDatedChanges(t *testing.T) {
	recs := []churnRecord{
		{Kind: opFlip, NS: "ns", Resource: "pods", Verb: "update", Name: "p", Sent: at(10), Done: at(10.2), Affected: []string{"ns/a"}},
		{Kind: opNSCreate, NS: "ns2", Resource: "namespaces", Verb: "create", Name: "ns2", Sent: at(11), Done: at(11.1), Affected: []string{"ns2/x"}},
		{Kind: opFlip, NS: "ns", Resource: "pods", Verb: "update", Name: "q", Sent: at(12), Done: at(12.1), Affected: []string{"ns/b"}},
		{Kind: opFlip, NS: "ns", Resource: "pods", Verb: "update", Name: "r", Sent: at(13), Done: at(13.1)},                                          // changed no Service
		{Kind: opFlip, NS: "ns", Resource: "pods", Verb: "update", Name: "s", Sent: at(14), Done: at(14.1), Err: "boom", Affected: []string{"ns/c"}}, // failed
	}
	evs := []auditEvent{
		{Received: at(9), User: "admin", Verb: "update", Resource: "pods", Namespace: "ns", Name: "p"}, // an earlier write of p
		{Received: at(10.05), User: "admin", Verb: "update", Resource: "pods", Namespace: "ns", Name: "p"},
		{Received: at(11.02), User: "admin", Verb: "create", Resource: "namespaces", Name: "ns2"},
		{Received: at(12.05), User: "someone", Verb: "update", Resource: "pods", Namespace: "ns", Name: "q"},
	}
	got, undated := datedChanges(recs, evs, "admin")
	if len(got) != 3 || undated != 1 || got[0].At != at(10.05) || got[1].At != at(11.02) || got[2].At != at(12) {
		t.Fatalf("%+v, %d undated", got, undated)
	}
}

// A hand-back is timed from the controller's return to the sample without
// slices of ours; a Service still ours at the end has none.
func TestHandBacks(t *testing.T) {
	outs := []window{{From: at(100), To: at(130), Why: "kcm-kill"}}
	tos := []takeover{
		{Service: "ns/a", MissedAt: at(101), FirstWrite: at(106)},
		{Service: "ns/b", MissedAt: at(102), FirstWrite: at(107)},
		{Service: "ns/c", MissedAt: at(103), FirstWrite: at(104), Served: true},
	}
	ours := []oursChange{
		{Service: "ns/a", At: at(106), Names: []string{"a-1"}},
		{Service: "ns/a", At: at(165), Gone: true},
		{Service: "ns/b", At: at(107), Names: []string{"b-1"}},
	}
	hs := handBacks(tos, outs, ours)
	if len(hs) != 2 || hs[0].Took != 35*time.Second || hs[1].Took != 0 {
		t.Fatalf("%+v", hs)
	}
}

func TestFinalFirstLines(t *testing.T) {
	f := finalResult{CheckCode: 1, CheckOut: "\nsvc shop/web: Missing 10.0.0.1\nmore\n", DiffCode: 1,
		DiffOut: "--- /dev/null\n+++ ns/endpointslice/web-<new-1>\n@@\n--- ns/endpointslice/api-x (live)\n+++ ns/endpointslice/api-x (planned)\n"}
	got := f.firstLines()
	if !strings.Contains(got, "check: svc shop/web: Missing 10.0.0.1") || !strings.Contains(got, "create 1 slices and change or delete 1 (first ns/endpointslice/web-<new-1>)") {
		t.Errorf("%q", got)
	}
}
