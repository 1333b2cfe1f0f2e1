package printers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

func TestSelectorMatchesGrammar(t *testing.T) {
	for n, want := range map[int]string{0: "Selector matches 0 Pods\n", 1: "Selector matches 1 Pod\n", 2: "Selector matches 2 Pods\n"} {
		var b bytes.Buffer
		r := explain.Report{Selector: explain.Selection{Matched: n}}
		if err := Explain(&b, Style{}, r, ShowPodsAuto); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "\n"+want) {
			t.Errorf("%d Pods:\n%s", n, b.String())
		}
	}
}

func TestVersionNotesSection(t *testing.T) {
	note := explain.VersionNote{Difference: explain.ZonelessHint, Since: "v1.33", Pods: []string{"web-0"}, Message: "ready endpoints without a zone"}
	for _, tc := range []struct {
		notes []explain.VersionNote
		want  string
	}{
		{nil, ""},
		{[]explain.VersionNote{note}, "\nCluster release v1.32: kube-controller-manager differs here:\n" +
			"  ZonelessHint (until v1.33): ready endpoints without a zone\n\nDiagnosis: in sync\n"},
	} {
		var b bytes.Buffer
		r := explain.Report{ClusterRelease: "v1.32", VersionNotes: tc.notes, InSync: true, Diagnosis: explain.Diagnosis{Summary: "in sync"}}
		if err := Explain(&b, Style{}, r, ShowPodsAuto); err != nil {
			t.Fatal(err)
		}
		got := b.String()
		if tc.want == "" && strings.Contains(got, "Cluster release") {
			t.Errorf("no notes, yet a release section:\n%s", got)
		}
		if tc.want != "" && !strings.HasSuffix(got, tc.want) {
			t.Errorf("want the section before the diagnosis:\n%s\ngot:\n%s", tc.want, got)
		}
	}
}
