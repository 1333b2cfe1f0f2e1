package printers

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// What was skipped is said on stderr in every format; stdout holds the
// table, or the data alone.
func TestCheckOutput(t *testing.T) {
	r := explain.CheckReport{Healthy: true, Skipped: []string{"Endpoints: forbidden", "mirrored slices"}}
	for _, format := range []string{"", "json"} {
		var out, errOut bytes.Buffer
		if err := CheckOutput(&out, &errOut, Style{}, format, r); err != nil {
			t.Fatal(err)
		}
		if want := "Warning: skipped Endpoints: forbidden; mirrored slices\n"; errOut.String() != want {
			t.Errorf("-o %q: stderr %q, want %q", format, errOut.String(), want)
		}
		var data map[string]any
		if isJSON := json.Unmarshal(out.Bytes(), &data) == nil; isJSON != (format == "json") || out.Len() == 0 {
			t.Errorf("-o %q: stdout %q", format, out.String())
		}
	}
	var errOut bytes.Buffer
	_ = CheckOutput(&bytes.Buffer{}, &errOut, Style{}, "", explain.CheckReport{Healthy: true})
	if errOut.Len() != 0 {
		t.Errorf("nothing skipped, yet stderr %q", errOut.String())
	}
}
