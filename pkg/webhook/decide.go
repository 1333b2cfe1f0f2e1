package webhook

import (
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// Limits on what a Service admission returns. The API server truncates a
// warning over 256 characters and drops warnings past 4 KiB in all; kubectl
// prints each as one "Warning: ..." line, so a few short ones are read and
// many are not.
const (
	maxWarnings   = 3
	maxWarningLen = 240
	warnPrefix    = "kubectl-slices: "
)

// Verdict is an admission answer before it is put into an AdmissionReview.
type Verdict struct {
	Allowed  bool
	Message  string
	Warnings []string
}

// Decide turns findings into an answer: by default every finding is a
// warning and the write is allowed; a finding whose kind is in denyOn denies
// it, with the denying findings as the message. mayListPods says whether
// the writer may read the Pod names, labels and ports the findings rest on;
// without it they are worded without them.
func Decide(findings []Finding, denyOn map[Kind]bool, mayListPods bool) Verdict {
	v := Verdict{Allowed: true}
	var deny []string
	for _, f := range findings {
		text := f.Text(mayListPods)
		if denyOn[f.Kind] {
			deny = append(deny, text+" (denied by --deny-on "+string(f.Kind)+")")
			continue
		}
		if len(v.Warnings) < maxWarnings {
			v.Warnings = append(v.Warnings, warning(warnPrefix+text))
		}
	}
	if len(deny) > 0 {
		v.Allowed, v.Message = false, strings.Join(deny, "; ")
	}
	return v
}

// warning is s as an admission warning: at most maxWarningLen bytes, and
// printable on one line, as the API server drops a warning holding a
// control character or a byte that is not UTF-8.
func warning(s string) string {
	return english.ClipTo(s, maxWarningLen)
}
