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
