package printers

import (
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/apply"
)

func TestDryRunWording(t *testing.T) {
	for _, c := range []struct {
		d            apply.DryRun
		name, suffix string
	}{
		{apply.DryRunNone, "", ""},
		{apply.DryRunClient, "client", " (dry run)"},
		{apply.DryRunServer, "server", " (server dry run)"},
	} {
		if got := DryRunName(c.d); got != c.name {
			t.Errorf("DryRunName(%q) = %q, want %q", c.d, got, c.name)
		}
		if got := DryRunSuffix(c.d); got != c.suffix {
			t.Errorf("DryRunSuffix(%q) = %q, want %q", c.d, got, c.suffix)
		}
	}
}
