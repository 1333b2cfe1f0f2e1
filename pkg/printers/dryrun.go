package printers

import "github.com/kubectl-slices/kubectl-slices/pkg/outcome"

// DryRunName is how a summary names a dry run ("client", "server"): ""
// when writing.
func DryRunName(d outcome.DryRun) string {
	if d == outcome.DryRunNone {
		return ""
	}
	return string(d)
}

// DryRunSuffix ends each line of a dry run's objects, as kubectl's: " (dry
// run)", " (server dry run)", or "" when writing.
func DryRunSuffix(d outcome.DryRun) string {
	switch d {
	case outcome.DryRunClient:
		return " (dry run)"
	case outcome.DryRunServer:
		return " (server dry run)"
	}
	return ""
}
