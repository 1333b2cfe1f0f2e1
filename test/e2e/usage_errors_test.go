package e2e

import (
	"strings"
	"testing"
)

// A value no API object can carry (a label value, a namespace, a Service
// name) and a --watch flag without --watch are usage errors: exit 2, one
// line, nothing written, whatever --dry-run says. They are found before
// any request: pointed at a server that refuses every connection, the
// code is still 2, not 4.
func TestUsageErrorsBeforeRequests(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 3))

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"managed-by not a label value", []string{"sync", "svc/web", "-n", ns, "--managed-by", "bad value!"}, `--managed-by "bad value!" is not a valid label value`},
		{"managed-by with client dry run", []string{"sync", "svc/web", "-n", ns, "--managed-by", "bad value!", "--dry-run=client"}, `--managed-by "bad value!"`},
		{"namespace not a DNS label", []string{"sync", "svc/web", "-n", "BAD NS"}, `"BAD NS" is not a valid namespace`},
		{"service name ..", []string{"sync", "svc/..", "-n", ns}, `"svc/.." is not a Service name`},
		{"service name with a newline", []string{"explain", "svc/we\nb", "-n", ns}, `"svc/we\nb" is not a Service name`},
		{"batch period without watch", []string{"sync", "svc/web", "-n", ns, "--batch-period", "1s"}, "--batch-period is valid only with --watch"},
		{"check in a bad namespace", []string{"check", "-n", "BAD NS"}, `"BAD NS" is not a valid namespace`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, extra := range [][]string{nil, {"--server", "https://127.0.0.1:1", "--request-timeout", "5s"}} {
				r := slices(t, append(append([]string{}, c.args...), extra...)...).mustCode(t, 2)
				line := strings.TrimSpace(r.Stderr)
				if !strings.HasPrefix(line, "error: ") || !strings.Contains(line, c.want) || strings.Contains(line, "\n") {
					t.Errorf("%v: stderr %q, want one error line containing %q", extra, line, c.want)
				}
			}
			if n := len(allSliceVersions(t, shared, ns)); n != 0 {
				t.Errorf("%d slices written", n)
			}
		})
	}
}
