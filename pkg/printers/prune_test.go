package printers

import (
	"bytes"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/explain"
)

func TestPrune(t *testing.T) {
	sl := &discovery.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "gone-1"}}
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "gone"}}
	found := PruneReport{Slices: []explain.Orphan{{Slice: sl, Service: "gone"}}, SlicesSeen: 3,
		Endpoints: []explain.EndpointsOrphan{{Endpoints: ep}}, EndpointsSeen: 2, ManagedBy: "kubectl-slices", DryRun: " (dry run)"}
	done := found
	done.DeletedSlices, done.DeletedEndpoints = []*discovery.EndpointSlice{sl}, []*corev1.Endpoints{ep}
	slicesFailed := found
	slicesFailed.SlicesFailed, slicesFailed.Failed = true, true
	endpointsFailed := found
	endpointsFailed.DeletedSlices, endpointsFailed.Failed = []*discovery.EndpointSlice{sl}, true
	cases := []struct {
		name        string
		r           PruneReport
		out, notOut []string
		summary     string
	}{
		{"nothing", PruneReport{SlicesSeen: 3, EndpointsSeen: 2, ManagedBy: "kubectl-slices"},
			[]string{"Nothing to prune: 3 slices and 2 Endpoints objects of kubectl-slices checked"}, []string{"ENDPOINTSLICE"}, ""},
		{"both", done, []string{"ENDPOINTSLICE", "endpointslice.discovery.k8s.io/gone-1 deleted (dry run) (namespace shop)", "ENDPOINTS REASON", "endpoints/gone deleted (dry run) (namespace shop)"}, nil,
			"1 of 3 slices and 1 of 2 Endpoints objects of kubectl-slices pruned (dry run).\n"},
		{"slices failed", slicesFailed, []string{"ENDPOINTSLICE"}, []string{"deleted", "ENDPOINTS  REASON"}, ""},
		{"endpoints failed", endpointsFailed, []string{"endpointslice.discovery.k8s.io/gone-1 deleted"}, []string{"endpoints/gone deleted"}, ""},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		Prune(&out, &errOut, Style{}, c.r)
		for _, s := range c.out {
			if !strings.Contains(strings.ReplaceAll(out.String(), " ", ""), strings.ReplaceAll(s, " ", "")) {
				t.Errorf("%s: no %q in\n%s", c.name, s, out.String())
			}
		}
		for _, s := range c.notOut {
			if strings.Contains(out.String(), s) {
				t.Errorf("%s: %q in\n%s", c.name, s, out.String())
			}
		}
		if errOut.String() != c.summary {
			t.Errorf("%s: stderr %q, want %q", c.name, errOut.String(), c.summary)
		}
	}
	// After the slices failed, the Endpoints table is not printed.
	var out bytes.Buffer
	Prune(&out, &bytes.Buffer{}, Style{}, slicesFailed)
	if strings.Count(out.String(), "NAMESPACE") != 1 {
		t.Errorf("slices failed, yet the Endpoints table was printed:\n%s", out.String())
	}
}
