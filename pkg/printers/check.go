package printers

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

// Check renders check's findings as a table, each finding followed by its
// message on an indented line, then one summary line.
func Check(w io.Writer, st Style, r explain.CheckReport) {
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "%s: %d Services and %d EndpointSlices checked, no findings.\n", st.Green("healthy"), r.Services, r.Slices)
		return
	}
	t := newTable(w)
	fmt.Fprintln(t, st.Bold("NAMESPACE")+"\t"+st.Bold("SERVICE")+"\t"+st.Bold("FINDING")+"\t"+st.Bold("REPAIR"))
	services := map[string]bool{}
	for _, f := range r.Findings {
		services[f.Namespace+"/"+f.Service] = true
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\n", f.Namespace, f.Service, st.Yellow(string(f.Kind)), f.Command)
		fmt.Fprintf(t, "  %s\n", f.Message)
	}
	t.Flush()
	fmt.Fprintf(w, "%s in %d of %d Services (%d EndpointSlices checked).\n",
		st.Red(english.Plural(len(r.Findings), "finding", "findings")), len(services), r.Services, r.Slices)
}

// CheckOutput prints check's report: what lack of optional rights left
// out, on errW in every format; then the report as data in format (json,
// yaml) or, with none, as Check's table.
func CheckOutput(w, errW io.Writer, st Style, format string, r explain.CheckReport) error {
	if len(r.Skipped) > 0 {
		fmt.Fprintf(errW, "Warning: skipped %s\n", strings.Join(r.Skipped, "; "))
	}
	if format != "" {
		return Data(w, format, r)
	}
	Check(w, st, r)
	return nil
}
