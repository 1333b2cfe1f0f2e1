package main

import (
	"strings"
	"testing"
	"time"
)

// A model run on its own (every op succeeding) fills its namespaces, keeps
// every Service within its bounds, never reuses an address, and makes every
// kind of change.
func TestModelChurn(t *testing.T) {
	start := time.Unix(0, 0)
	cfg := defaultModel
	m := newModel(cfg, 7, start)
	seen := map[opKind]int{}
	ips := map[string]bool{}
	for i := 0; i < 5000; i++ {
		now := start.Add(time.Duration(i) * 300 * time.Millisecond)
		o, ok := m.Plan(now)
		if !ok {
			t.Fatalf("op %d: nothing to plan", i)
		}
		seen[o.Kind]++
		if o.Kind == opScaleUp {
			if ips[o.Pod.IP] {
				t.Fatalf("address %s used twice", o.Pod.IP)
			}
			ips[o.Pod.IP] = true
		}
		m.Applied(o, now)
		if o.Kind == opNSDelete {
			m.Removed(o.NS) // the namespace controller is quick here
		}
	}
	for _, k := range opKinds {
		if seen[k] == 0 {
			t.Errorf("no %s in 5000 ops: %v", k, seen)
		}
	}
	for _, n := range m.live() {
		if len(n.Services) < cfg.MinServices || len(n.Services) > cfg.MaxServices {
			t.Errorf("namespace %s has %d Services", n.Name, len(n.Services))
		}
	}
	t.Logf("ops: %v", seen)
	if seen[opFlip] < seen[opScaleUp] {
		t.Errorf("flips should dominate: %v", seen)
	}
}

// Applied names the Services whose desired endpoints changed, and only
// those.
func TestModelAffected(t *testing.T) {
	m := newModel(modelConfig{Namespaces: 1, MinServices: 2, MaxServices: 2, MinPods: 1, MaxPods: 3}, 1, time.Unix(0, 0))
	now := time.Unix(0, 0)
	m.Applied(op{Kind: opNSCreate, NS: "soak-0"}, now)
	a := service{NS: "soak-0", Name: "a", Track: "blue"}
	b := service{NS: "soak-0", Name: "b", Track: "blue"}
	if got := m.Applied(op{Kind: opServiceCreate, NS: "soak-0", Service: a}, now); strings.Join(got, ",") != "soak-0/a" {
		t.Fatalf("create a: %v", got)
	}
	m.Applied(op{Kind: opServiceCreate, NS: "soak-0", Service: b}, now)
	p := pod{NS: "soak-0", Name: "p", Node: "soak-node-a1", IP: "10.0.0.1", App: "a", Track: "blue", Ready: true}
	if got := m.Applied(op{Kind: opScaleUp, NS: "soak-0", Pod: p}, now); strings.Join(got, ",") != "soak-0/a" {
		t.Fatalf("scale-up: %v", got)
	}
	p.App = "b"
	if got := m.Applied(op{Kind: opRelabel, NS: "soak-0", Pod: p}, now); strings.Join(got, ",") != "soak-0/a,soak-0/b" {
		t.Fatalf("relabel a to b: %v", got)
	}
	p.Track = "green"
	if got := m.Applied(op{Kind: opRelabel, NS: "soak-0", Pod: p}, now); strings.Join(got, ",") != "soak-0/b" {
		t.Fatalf("relabel out of b's track: %v", got)
	}
	a.Track = "green"
	if got := m.Applied(op{Kind: opSelectorSwitch, NS: "soak-0", Service: a}, now); len(got) != 0 {
		t.Fatalf("a selector switch that selects the same (no) Pods changes nothing: %v", got)
	}
	b.Track = "green"
	if got := m.Applied(op{Kind: opSelectorSwitch, NS: "soak-0", Service: b}, now); strings.Join(got, ",") != "soak-0/b" {
		t.Fatalf("selector switch of b: %v", got)
	}
	p.Ready = false
	if got := m.Applied(op{Kind: opFlip, NS: "soak-0", Pod: p}, now); strings.Join(got, ",") != "soak-0/b" {
		t.Fatalf("flip: %v", got)
	}
	if got := m.Applied(op{Kind: opScaleDown, NS: "soak-0", Pod: p}, now); strings.Join(got, ",") != "soak-0/b" {
		t.Fatalf("scale-down: %v", got)
	}
}

// A gone namespace is created again first; nothing else is planned in it
// meanwhile.
func TestModelNamespaceLifecycle(t *testing.T) {
	start := time.Unix(0, 0)
	cfg := modelConfig{Namespaces: 2, MinServices: 1, MaxServices: 2, MinPods: 1, MaxPods: 2, NamespaceEvery: time.Minute}
	m := newModel(cfg, 3, start)
	now := start
	for i := 0; i < 20; i++ {
		o, _ := m.Plan(now)
		m.Applied(o, now)
	}
	now = now.Add(2 * time.Minute)
	o, _ := m.Plan(now)
	if o.Kind != opNSDelete || o.NS != "soak-0" {
		t.Fatalf("due: want namespace-delete soak-0, got %+v", o)
	}
	m.Applied(o, now)
	for i := 0; i < 50; i++ {
		o, _ := m.Plan(now)
		if o.NS == "soak-0" {
			t.Fatalf("planned %s in a namespace being deleted", o.Kind)
		}
		m.Applied(o, now)
	}
	m.Removed("soak-0")
	if o, _ := m.Plan(now); o.Kind != opNSCreate || o.NS != "soak-0" {
		t.Fatalf("after removal: want namespace-create soak-0, got %+v", o)
	}
}
