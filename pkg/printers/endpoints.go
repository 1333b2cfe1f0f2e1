package printers

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
	"github.com/kubectl-slices/kubectl-slices/pkg/outcome"
)

// Endpoints writes one line about a Service's legacy v1 Endpoints object
// (sync --with-endpoints); dryRun is "", "client" or "server".
func Endpoints(w io.Writer, st Style, namespace, name string, out outcome.EndpointsOutcome, dryRun string) {
	if out.Plan == nil {
		return
	}
	obj := st.Bold(fmt.Sprintf("endpoints %s/%s", namespace, name))
	p := out.Plan
	switch p.Action {
	case endpoints.Skip:
		fmt.Fprintf(w, "%s %s: %s\n", obj, st.Yellow("skipped"), p.Message)
	case endpoints.None:
		if p.Desired == nil {
			fmt.Fprintf(w, "%s %s: %s\n", obj, st.Yellow("skipped"), p.Message)
			return
		}
		fmt.Fprintf(w, "%s %s: %d ready, %d not ready addresses\n", obj, st.Green("in sync"), p.Ready, p.NotReady)
	default:
		verb := map[endpoints.Action]string{endpoints.Create: "created", endpoints.Update: "updated"}[p.Action]
		if dryRun != "" {
			verb = "would be " + verb + " (dry run: " + dryRun + ")"
		}
		extra := ""
		if p.Truncated {
			extra = fmt.Sprintf(" (truncated to %d: annotation %s=%s)", endpoints.MaxCapacity, corev1.EndpointsOverCapacity, endpoints.Truncated)
		}
		fmt.Fprintf(w, "%s %s: %d ready, %d not ready addresses%s\n", obj, st.Green(verb), p.Ready, p.NotReady, extra)
	}
}
