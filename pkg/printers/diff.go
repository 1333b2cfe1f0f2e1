package printers

import (
	"fmt"
	"io"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	discovery "k8s.io/api/discovery/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// Diff writes a plan as unified diffs of YAML, one per slice written, in the
// manner of kubectl diff. It returns whether anything differs.
func Diff(w io.Writer, st Style, plan *reconcile.Plan) (bool, error) {
	changed := false
	emit := func(from, to *discovery.EndpointSlice, fromName, toName string) error {
		a, err := diffYAML(from)
		if err != nil {
			return err
		}
		b, err := diffYAML(to)
		if err != nil {
			return err
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b, FromFile: fromName, ToFile: toName, Context: 3})
		if err != nil || text == "" {
			return err
		}
		changed = true
		return colourDiff(w, st, text)
	}
	ns := plan.Service.Namespace
	for i, s := range plan.Create {
		if err := emit(nil, s, "/dev/null", fmt.Sprintf("%s/endpointslice/%s<new-%d>", ns, s.GenerateName, i+1)); err != nil {
			return changed, err
		}
	}
	for _, s := range plan.Update {
		name := fmt.Sprintf("%s/endpointslice/%s", ns, s.Name)
		if err := emit(plan.Live(s.Name), s, name+" (live)", name+" (planned)"); err != nil {
			return changed, err
		}
	}
	for _, s := range plan.Delete {
		if err := emit(s, nil, fmt.Sprintf("%s/endpointslice/%s (live)", ns, s.Name), "/dev/null"); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// diffYAML renders a slice for diffing without the fields the API server
// owns, so the diff shows only what the plan changes.
func diffYAML(s *discovery.EndpointSlice) ([]string, error) {
	if s == nil {
		return nil, nil
	}
	c := withKind(s)
	c.ResourceVersion, c.UID, c.Generation = "", "", 0
	c.CreationTimestamp.Reset()
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	lines := difflib.SplitLines(string(b))
	return lines, nil
}

func colourDiff(w io.Writer, st Style, text string) error {
	for _, line := range strings.SplitAfter(text, "\n") {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = st.Bold(line)
		case strings.HasPrefix(line, "+"):
			line = st.Green(line)
		case strings.HasPrefix(line, "-"):
			line = st.Red(line)
		case strings.HasPrefix(line, "@@"):
			line = st.Cyan(line)
		}
		if _, err := io.WriteString(w, line); err != nil {
			return err
		}
	}
	return nil
}

// Diffs writes each Service's diff in order, its planner warnings and its
// failure (with the writes made before it) on errW as they come. It
// returns whether any Service would change and the first failure; err is
// a failure to write the diff itself.
func Diffs(w, errW io.Writer, st, errSt Style, runs []outcome.Outcome) (changed bool, failed, err error) {
	for _, run := range runs {
		if run.Err != nil {
			Failures(errW, errSt, []outcome.Outcome{run})
			if failed == nil {
				failed = run.Err
			}
			continue
		}
		if run.Held != "" {
			continue // sync writes nothing here: no change to show
		}
		Warnings(errW, errSt, run.Plan)
		c, err := Diff(w, st, run.Plan)
		if err != nil {
			return changed, failed, err
		}
		changed = changed || c
	}
	return changed, failed, nil
}
