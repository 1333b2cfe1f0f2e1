package printers

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// maxFindings is how many findings of a node the table lists; -o json
// carries them all.
const maxFindings = 10

// VerifyOutput prints verify's report as data in format (json, yaml) or,
// with none, as Verify's tables.
func VerifyOutput(w io.Writer, st Style, format string, r verdict.Report) error {
	if format != "" {
		return Data(w, format, r)
	}
	Verify(w, st, r)
	return nil
}

// Verify renders verify's report: the Services, a row per node with its
// findings below it, then the diagnosis and the next command.
func Verify(w io.Writer, st Style, r verdict.Report) {
	t := newTable(w)
	fmt.Fprintln(t, st.Bold("NAMESPACE")+"\t"+st.Bold("SERVICE")+"\t"+st.Bold("SLICES")+"\t"+st.Bold("LAST CHANGE")+"\t"+st.Bold("PLAN"))
	for _, s := range r.Services {
		plan := s.Plan
		switch {
		case s.Skipped != "":
			plan = "- (no proxy programs it: " + s.Skipped + ")"
		case s.Plan == verdict.PlanDiffers:
			plan = st.Red(plan) + ": " + safe(s.PlanDetail)
		case s.PlanDetail != "":
			plan += ": " + safe(s.PlanDetail)
		}
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\n", s.Namespace, s.Name, s.Slices, stamp(s.LastChange), plan)
	}
	t.Flush()
	fmt.Fprintln(w)
	t = newTable(w)
	fmt.Fprintln(t, strings.Join([]string{st.Bold("NODE"), st.Bold("PROXY"), st.Bold("LAST SYNC"), st.Bold("EXPECTED"), st.Bold("PROGRAMMED"),
		st.Bold("MISSING"), st.Bold("EXTRA"), st.Bold("STATUS"), st.Bold("REASON")}, "\t"))
	for _, n := range r.Nodes {
		proxy := n.Proxy
		if n.Mode != "" {
			proxy += "/" + n.Mode
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", n.Node, safe(proxy), stamp(n.LastSync), n.Expected, n.Programmed,
			len(n.Missing), len(n.Extra), paintStatus(st, n.Status), safe(n.Reason))
		listed := 0
		for _, f := range append(append([]verdict.Finding(nil), n.Missing...), n.Extra...) {
			if listed == maxFindings {
				fmt.Fprintf(t, "  ... %d more (-o json lists them all)\n", len(n.Missing)+len(n.Extra)-listed)
				break
			}
			kind := "missing"
			if listed >= len(n.Missing) {
				kind = "extra"
			}
			fmt.Fprintf(t, "  %s: %s\n", kind, finding(f))
			listed++
		}
	}
	t.Flush()
	if len(r.DNS) > 0 {
		fmt.Fprintln(w)
		t = newTable(w)
		fmt.Fprintln(t, strings.Join([]string{st.Bold("DNS REPLICA"), st.Bold("MISSING"), st.Bold("EXTRA"), st.Bold("STATUS"), st.Bold("REASON")}, "\t"))
		for _, d := range r.DNS {
			fmt.Fprintf(t, "%s\t%d\t%d\t%s\t%s\n", d.Replica, len(d.Missing), len(d.Extra), paintStatus(st, verdict.Status(d.Status)), safe(d.Reason))
		}
		t.Flush()
	}
	fmt.Fprintf(w, "\n%s: %s\n", paintStatus(st, r.Status), safe(r.Diagnosis))
	if r.Next != "" {
		fmt.Fprintf(w, "Next: %s\n", r.Next)
	}
}

func finding(f verdict.Finding) string {
	port := f.Service
	if f.Port != "" {
		port += ":" + f.Port
	}
	var s string
	switch f.What {
	case "endpoint":
		s = fmt.Sprintf("%s endpoint %s (chain %s)", port, safe(f.Endpoint), safe(f.Chain))
		if f.Endpoint == "" {
			s = fmt.Sprintf("%s endpoint (chain %s)", port, safe(f.Chain))
		}
		if f.Detail != "" {
			s += ": " + safe(f.Detail)
		}
	default:
		s = fmt.Sprintf("%s %s %s", port, f.What, safe(f.Detail))
	}
	if f.Pending {
		s += " (pending: not synced since the change)"
	}
	return s
}

func paintStatus(st Style, s verdict.Status) string {
	switch s {
	case verdict.OK:
		return st.Green(string(s))
	case verdict.Drift:
		return st.Red(string(s))
	}
	return st.Yellow(string(s))
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// safe quotes what a node answered when it holds anything but printable
// text, so that no answer can move the cursor or forge a line.
func safe(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
