package printers

import "github.com/kubectl-slices/kubectl-slices/pkg/apply"

// DryRunName is how a summary names a dry run ("client", "server"): ""
// when writing.
func DryRunName(d apply.DryRun) string {
	if d == apply.DryRunNone {
		return ""
	}
	return string(d)
}

// DryRunSuffix ends each line of a dry run's objects, as kubectl's: " (dry
// run)", " (server dry run)", or "" when writing.
func DryRunSuffix(d apply.DryRun) string {
	switch d {
	case apply.DryRunClient:
		return " (dry run)"
	case apply.DryRunServer:
		return " (server dry run)"
	}
	return ""
}
