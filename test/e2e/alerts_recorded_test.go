package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-slices/kubectl-slices/test/promrecord"
)

// The families the rules read, from a scrape of the real binary.
var ruleFamilies = []string{"kubectl_slices_", "leader_election_", "workqueue_", "rest_client_"}

// servingAlert runs `promtool test rules` on one scrape of the loop's
// /metrics, held for 20 minutes as if every scrape had read it, and
// expects KubectlSlicesServingServices to fire naming serving Services, or
// to stay silent when serving is 0. Skipped, saying so, without promtool
// (make test builds it).
func servingAlert(t *testing.T, mf map[string]*dto.MetricFamily, serving int, when string) {
	t.Helper()
	dir := os.Getenv("KUBECTL_SLICES_PROMTOOL")
	if dir == "" {
		t.Logf("%s: KUBECTL_SLICES_PROMTOOL is not set: the takeover alert is not tried on these samples", when)
		return
	}
	var firing []promrecord.Firing
	if serving > 0 {
		firing = append(firing, promrecord.Firing{
			Labels: map[string]string{"severity": "warning", "namespace": "ops"},
			Annotations: map[string]string{
				"summary":     "kube-controller-manager fails Services that kubectl-slices serves.",
				"description": fmt.Sprintf("The kubectl-slices loop in ops publishes %d Services whose endpoints kube-controller-manager has not published for more than --takeover-after.", serving),
				"runbook_url": "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md#kubectlslicesservingservices",
			},
		})
	}
	target := promrecord.Target{Labels: map[string]string{"job": "kubectl-slices", "namespace": "ops", "pod": "kubectl-slices-a"}}
	for i := 0; i < 20; i++ {
		target.Scrapes = append(target.Scrapes, mf)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := promrecord.Test{Promtool: dir, Rules: "../../monitoring/kubectl-slices.rules.yaml", Interval: time.Minute,
		Series: promrecord.Series([]promrecord.Target{target}, ruleFamilies...),
		Alerts: []promrecord.Alert{{Name: "KubectlSlicesServingServices", EvalTime: 10 * time.Minute, Firing: firing}},
	}.Run(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("%s: KubectlSlicesServingServices on the loop's samples (want %d Services named): %v\n%s", when, serving, err, out)
	}
	t.Logf("%s: KubectlSlicesServingServices on the loop's samples: %s", when, map[bool]string{true: fmt.Sprintf("fires, naming %d Services", serving), false: "silent"}[serving > 0])
}
