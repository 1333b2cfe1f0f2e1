package daemon

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/watch"
)

// The status is a state set per target, UNKNOWN carries its class, and a
// target the last round did not see (a node deleted) has no series left.
func TestVerifyMetrics(t *testing.T) {
	m := newVerifyMetrics()
	m.set([]watch.Entry{
		{Kind: watch.Node, Name: "a", Status: verdict.Drift, Missing: 2},
		{Kind: watch.Node, Name: "b", Status: verdict.Unknown, Class: watch.ClassNotReady},
	}, 1700000000, 0.4)
	want := `
# HELP kubectl_slices_dataplane_status The data plane's status per node and DNS replica as the last round found it: 1 for the status held (OK, DRIFT, PENDING, UNKNOWN), 0 for the others
# TYPE kubectl_slices_dataplane_status gauge
kubectl_slices_dataplane_status{kind="node",status="DRIFT",target="a"} 1
kubectl_slices_dataplane_status{kind="node",status="OK",target="a"} 0
kubectl_slices_dataplane_status{kind="node",status="PENDING",target="a"} 0
kubectl_slices_dataplane_status{kind="node",status="UNKNOWN",target="a"} 0
kubectl_slices_dataplane_status{kind="node",status="DRIFT",target="b"} 0
kubectl_slices_dataplane_status{kind="node",status="OK",target="b"} 0
kubectl_slices_dataplane_status{kind="node",status="PENDING",target="b"} 0
kubectl_slices_dataplane_status{kind="node",status="UNKNOWN",target="b"} 1
# HELP kubectl_slices_dataplane_unknown_info 1 while the target is UNKNOWN, with why by class: forbidden, node-not-ready, no-proxy, unreadable
# TYPE kubectl_slices_dataplane_unknown_info gauge
kubectl_slices_dataplane_unknown_info{class="node-not-ready",kind="node",target="b"} 1
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "kubectl_slices_dataplane_status", "kubectl_slices_dataplane_unknown_info"); err != nil {
		t.Fatal(err)
	}
	m.set([]watch.Entry{{Kind: watch.Node, Name: "b", Status: verdict.OK}}, 1700000030, 0.3)
	want = `
# HELP kubectl_slices_dataplane_missing_endpoints Endpoints (or DNS records) the EndpointSlices hold that the target does not serve, as the last round found
# TYPE kubectl_slices_dataplane_missing_endpoints gauge
kubectl_slices_dataplane_missing_endpoints{kind="node",target="b"} 0
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "kubectl_slices_dataplane_missing_endpoints", "kubectl_slices_dataplane_unknown_info"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.status); n != 4 {
		t.Errorf("%d status series after node a left, want b's 4", n)
	}
	problems, err := promlint.NewWithMetricFamilies(mustGather(t, m)).Lint()
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

func mustGather(t *testing.T, m *verifyMetrics) []*dto.MetricFamily {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return fams
}
