package printers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// Several Pods' reports are each printed as one alone, a blank line
// between two; as data one report is itself and several are a list.
func TestExplainPods(t *testing.T) {
	a := explain.PodReport{Pod: explain.PodInfo{Namespace: "shop", Name: "web-1"}}
	b := explain.PodReport{Pod: explain.PodInfo{Namespace: "shop", Name: "web-2"}}
	var one, two, both bytes.Buffer
	if err := ExplainPod(&one, Style{}, a); err != nil {
		t.Fatal(err)
	}
	if err := ExplainPod(&two, Style{}, b); err != nil {
		t.Fatal(err)
	}
	if err := ExplainPods(&both, Style{}, []explain.PodReport{a, b}); err != nil {
		t.Fatal(err)
	}
	if want := one.String() + "\n" + two.String(); both.String() != want {
		t.Errorf("got\n%s\nwant\n%s", both.String(), want)
	}
	var single, list bytes.Buffer
	if err := PodsData(&single, "json", []explain.PodReport{a}); err != nil || !strings.HasPrefix(single.String(), "{") {
		t.Errorf("one report: %q, %v", single.String(), err)
	}
	if err := PodsData(&list, "json", []explain.PodReport{a, b}); err != nil || !strings.HasPrefix(list.String(), "[") {
		t.Errorf("two reports: %q, %v", list.String(), err)
	}
}

// --show-pods takes all, excluded, or nothing (the default); no other word.
func TestShowPodsValid(t *testing.T) {
	for s, want := range map[ShowPods]bool{"": true, "all": true, "excluded": true, "none": false, "All": false} {
		if s.Valid() != want {
			t.Errorf("%q: valid %v, want %v", s, !want, want)
		}
	}
}
