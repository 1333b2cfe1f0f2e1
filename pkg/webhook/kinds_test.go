package webhook

import (
	"strings"
	"testing"
)

// --deny-on reads finding names, spaces trimmed; an unknown one is refused
// on one line that lists the known.
func TestParseKinds(t *testing.T) {
	got, err := ParseKinds([]string{"NoPods", " PortNotFound"})
	if err != nil || !got[NoPods] || !got[PortNotFound] || len(got) != 2 {
		t.Errorf("%v %v", got, err)
	}
	_, err = ParseKinds([]string{"NoPods", "Typo"})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `"Typo"`) || !strings.Contains(err.Error(), string(NoEndpoints)) {
		t.Errorf("unknown finding: %v", err)
	}
}
