package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// snap is a snapshot at second s from Services and Pods given directly.
func snap(s float64, svcs map[string]serviceView, pods map[string]podView) snapshot {
	return snapshot{SlicesAt: at(s), PodsAt: at(s + 0.05), Services: svcs, Pods: pods}
}

func readySet(addrs ...string) map[string]bool {
	m := map[string]bool{}
	for _, a := range addrs {
		m[a] = true
	}
	return m
}

var webSel = map[string]string{"app": "web"}

func webPod(rv string, ready bool) podView {
	return podView{NS: "ns", Name: "web-1", RV: rv, Ready: ready, Labels: map[string]string{"app": "web"}}
}

// A ready endpoint vanishing while its Pod stays ready, selected and
// unchanged is a drop; one whose Pod changed (turned not ready, was
// relabelled, deleted) is not, nor one of a Service whose selector moved.
func TestTrackerDrops(t *testing.T) {
	cases := []struct {
		name   string
		before serviceView
		pod0   map[string]podView
		after  serviceView
		pod1   map[string]podView
		drops  int
	}{
		{"dropped while ready", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "1", Selector: webSel, Ready: readySet()}, map[string]podView{"10.0.0.1": webPod("5", true)}, 1},
		{"kept", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)}, 0},
		{"pod turned not ready", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "1", Selector: webSel, Ready: readySet()}, map[string]podView{"10.0.0.1": webPod("6", false)}, 0},
		{"pod flipped twice between samples", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "1", Selector: webSel, Ready: readySet()}, map[string]podView{"10.0.0.1": webPod("7", true)}, 0},
		{"pod deleted", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "1", Selector: webSel, Ready: readySet()}, map[string]podView{}, 0},
		{"selector switched", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "2", Selector: map[string]string{"app": "api"}, Ready: readySet()}, map[string]podView{"10.0.0.1": webPod("5", true)}, 0},
		{"namespace being deleted", serviceView{RV: "1", Selector: webSel, Ready: readySet("10.0.0.1")}, map[string]podView{"10.0.0.1": webPod("5", true)},
			serviceView{RV: "1", Selector: webSel, Ready: readySet(), Terminating: true}, map[string]podView{"10.0.0.1": webPod("5", true)}, 0},
	}
	for _, c := range cases {
		tr := newTracker()
		tr.Observe(snap(0, map[string]serviceView{"ns/web": c.before}, c.pod0))
		tr.Observe(snap(0.25, map[string]serviceView{"ns/web": c.after}, c.pod1))
		if len(tr.Drops) != c.drops {
			t.Errorf("%s: %d drops, want %d: %+v", c.name, len(tr.Drops), c.drops, tr.Drops)
		}
		if c.drops > 0 && (tr.Drops[0].Missed != at(0.25) || tr.Drops[0].Pod != "ns/web-1") {
			t.Errorf("%s: %+v", c.name, tr.Drops[0])
		}
	}
}

// A difference between the desired and the controller's endpoints opens
// at the first sample showing it (remembering the sample before) and
// closes when it is current again or the Service is gone; every change of
// our slices is recorded.
func TestTrackerDiffsAndOurs(t *testing.T) {
	tr := newTracker()
	cur := serviceView{RV: "1", Desired: "a", Controller: "a", Ours: noSlices}
	tr.Observe(snap(0, map[string]serviceView{"ns/web": cur}, nil))
	behind := serviceView{RV: "1", Desired: "b", Controller: "a", Ours: noSlices}
	tr.Observe(snap(1, map[string]serviceView{"ns/web": behind}, nil))
	served := serviceView{RV: "1", Desired: "b", Controller: "a", Ours: "b", OursNames: []string{"web-x"}}
	tr.Observe(snap(2, map[string]serviceView{"ns/web": served}, nil))
	back := serviceView{RV: "1", Desired: "b", Controller: "b", Ours: "b", OursNames: []string{"web-x"}}
	tr.Observe(snap(3, map[string]serviceView{"ns/web": back}, nil))
	handed := serviceView{RV: "1", Desired: "b", Controller: "b", Ours: noSlices}
	tr.Observe(snap(4, map[string]serviceView{"ns/web": handed}, nil))
	tr.Observe(snap(5, map[string]serviceView{"ns/web": behind}, nil))
	tr.Observe(snap(6, map[string]serviceView{}, nil))
	terminating := behind
	terminating.Terminating = true
	tr.Observe(snap(7, map[string]serviceView{"ns/web": back}, nil))
	tr.Observe(snap(8, map[string]serviceView{"ns/web": served}, nil))
	tr.Observe(snap(9, map[string]serviceView{"ns/web": terminating}, nil))
	if len(tr.Diffs) != 3 {
		t.Fatalf("diffs: %+v", tr.Diffs)
	}
	if d := tr.Diffs[0]; d.PrevPodsAt != at(0.05) || d.OpenAt != at(1.05) || d.CloseAt != at(3) {
		t.Errorf("first difference: %+v", d)
	}
	if d := tr.Diffs[1]; d.OpenAt != at(5.05) || d.CloseAt != at(6) || d.Served {
		t.Errorf("second difference (closed by the Service's deletion): %+v", d)
	}
	if d := tr.Diffs[2]; d.OpenAt != at(8.05) || d.CloseAt != at(9) || !d.Served {
		t.Errorf("third difference (served by ours, closed as its namespace is deleted): %+v", d)
	}
	if len(tr.Changes) != 4 || tr.Changes[0].At != at(2) || tr.Changes[0].Before != at(1) || tr.Changes[0].Gone ||
		tr.Changes[1].At != at(4) || !tr.Changes[1].Gone {
		t.Errorf("our changes: %+v", tr.Changes)
	}
	if c := tr.Counts[2]; c.Served != 1 || c.Behind != 1 {
		t.Errorf("counts at 2s: %+v", c)
	}
}

// buildSnapshot renders the desired endpoints from the Pods a Service
// selects, and each manager's from its slices, alike.
func TestBuildSnapshot(t *testing.T) {
	yes, no := true, false
	node, zone := "soak-node-b1", "zone-b"
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: "3", Labels: map[string]string{"app": "web", "track": "blue"}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{PodIP: "10.0.0.1",
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", Labels: map[string]string{"app": "web", "track": "green"}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{PodIP: "10.0.0.2"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Labels: map[string]string{"app": "web", "track": "blue"}},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{PodIP: "10.0.0.3"}},
	}
	svcs := []corev1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "9"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web", "track": "blue"}}}}
	slice := func(name, mgr string, eps ...discovery.Endpoint) discovery.EndpointSlice {
		return discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels: map[string]string{discovery.LabelServiceName: "web", discovery.LabelManagedBy: mgr}}, Endpoints: eps}
	}
	ep := func(ip string, ready *bool) discovery.Endpoint {
		return discovery.Endpoint{Addresses: []string{ip}, Conditions: discovery.EndpointConditions{Ready: ready}, NodeName: &node, Zone: &zone}
	}
	sl := []discovery.EndpointSlice{
		slice("web-kcm", controllerManager, ep("10.0.0.3", &no), ep("10.0.0.1", &yes)),
		slice("web-ours", oursManager, ep("10.0.0.1", &yes)),
		slice("web-other", "someone-else", ep("10.0.0.9", &yes)),
	}
	s := buildSnapshot(at(0), at(0.1), sl, pods, svcs, nil)
	v := s.Services["ns/web"]
	if v.Desired != v.Controller || v.Desired != "10.0.0.1/true/soak-node-b1/zone-b 10.0.0.3/false/soak-node-b1/zone-b" {
		t.Errorf("desired %q, controller %q", v.Desired, v.Controller)
	}
	if v.Ours != "10.0.0.1/true/soak-node-b1/zone-b" || len(v.OursNames) != 1 || v.OursNames[0] != "web-ours" {
		t.Errorf("ours %q %v", v.Ours, v.OursNames)
	}
	if len(v.Ready) != 2 || !v.Ready["10.0.0.9"] || !v.Ready["10.0.0.1"] {
		t.Errorf("ready union %v", v.Ready)
	}
	if p := s.Pods["10.0.0.1"]; !p.Ready || p.RV != "3" || s.Pods["10.0.0.2"].Ready {
		t.Errorf("pods %+v", s.Pods)
	}
	s = buildSnapshot(at(0), at(0.1), nil, pods, svcs, map[string]bool{"ns": true})
	if v := s.Services["ns/web"]; v.Controller != noSlices || v.Ours != noSlices || !v.Terminating {
		t.Errorf("no slices, namespace terminating: %+v", v)
	}
	// A terminating endpoint counts on neither side.
	yesT := true
	gone := ep("10.0.0.7", &no)
	gone.Conditions.Terminating = &yesT
	sl[0].Endpoints = append(sl[0].Endpoints, gone)
	s = buildSnapshot(at(0), at(0.1), sl, pods, svcs, nil)
	if v := s.Services["ns/web"]; v.Desired != v.Controller {
		t.Errorf("a terminating endpoint: desired %q, controller %q", v.Desired, v.Controller)
	}
}
