package printers

import (
	"fmt"
	"io"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

// SyncReport prints one-shot sync's outcome, in the order a user reads it:
// each plan's warnings and the summary after the writes, a line per v1
// Endpoints write, then the failures and, with -o, the objects written.
type SyncReport struct {
	Out, ErrOut io.Writer
	St, ErrSt   Style
	// Output is -o: the objects then own stdout, and the summary and the
	// Endpoints lines go to stderr.
	Output string
	DryRun outcome.DryRun
}

// NewSyncReport styles each stream for color (--color).
func NewSyncReport(out, errOut io.Writer, color, output string, dryRun outcome.DryRun) SyncReport {
	return SyncReport{Out: out, ErrOut: errOut, St: StyleFor(color, out), ErrSt: StyleFor(color, errOut), Output: output, DryRun: dryRun}
}

// summary is where the summary and the Endpoints lines go.
func (r SyncReport) summary() (io.Writer, Style) {
	if r.Output != "" {
		return r.ErrOut, r.ErrSt
	}
	return r.Out, r.St
}

// Slices prints each plan's warnings and the summary of the slices'
// writes. A run a signal cut short (interrupted) first says what each
// Service cut mid-way wrote, and only the finished ones are summarised.
// It returns the runs summarised and every object written, for Done.
func (r SyncReport) Slices(runs []outcome.Outcome, interrupted bool) ([]outcome.Outcome, []Written) {
	var written []Written
	if interrupted {
		runs, written = Interrupted(r.ErrOut, runs)
	}
	for _, run := range runs {
		Warnings(r.ErrOut, r.ErrSt, run.Plan)
		written = append(written, WrittenOf(run.Result)...)
	}
	w, st := r.summary()
	Summary(w, st, runs, DryRunName(r.DryRun))
	return runs, written
}

// Endpoints prints a Service's v1 Endpoints write; err, its failure as
// the user reads it, goes to stderr on a line of its own.
func (r SyncReport) Endpoints(namespace, name string, out outcome.EndpointsOutcome, err error) {
	w, st := r.summary()
	Endpoints(w, st, namespace, name, out, DryRunName(r.DryRun))
	if err != nil {
		fmt.Fprintf(r.ErrOut, "%s %v\n", r.ErrSt.Red("error:"), err)
	}
}

// Done prints the slices' failures, each with the writes made before it,
// and, with -o, the objects written.
func (r SyncReport) Done(runs []outcome.Outcome, written []Written) error {
	Failures(r.ErrOut, r.ErrSt, runs)
	if r.Output == "" {
		return nil
	}
	return Objects(r.Out, r.Output, DryRunSuffix(r.DryRun), written)
}
