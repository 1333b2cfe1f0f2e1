package printers

import (
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

func TestDryRunWording(t *testing.T) {
	for _, c := range []struct {
		d            outcome.DryRun
		name, suffix string
	}{
		{outcome.DryRunNone, "", ""},
		{outcome.DryRunClient, "client", " (dry run)"},
		{outcome.DryRunServer, "server", " (server dry run)"},
	} {
		if got := DryRunName(c.d); got != c.name {
			t.Errorf("DryRunName(%q) = %q, want %q", c.d, got, c.name)
		}
		if got := DryRunSuffix(c.d); got != c.suffix {
			t.Errorf("DryRunSuffix(%q) = %q, want %q", c.d, got, c.suffix)
		}
	}
}
