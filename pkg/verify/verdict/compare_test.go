package verdict

import (
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

// An endpoint chain read whole without its DNAT (deleted by hand) is
// drift naming the endpoint it was written for, in either mode: traffic
// sent there is not delivered, which the reading says.
func TestEndpointChainWithoutDNATIsDrift(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	gone := proxyexpect.Endpoint{IP: "10.0.0.2", Port: 8080}
	for _, mode := range []proxyread.Mode{proxyread.ModeIptables, proxyread.ModeNftables} {
		r := programmed(svcs, n)
		r.Mode = mode
		ref := r.Ports[0].Want.Ref
		dead := proxyexpect.NftablesEndpointChain(ref, gone)
		if mode == proxyread.ModeIptables {
			dead = proxyexpect.IptablesEndpointChain(ref, gone)
		}
		r.Ports[0].Cluster.Endpoints = []string{"10.0.0.1:8080"}
		r.Ports[0].Cluster.NoDNAT = []string{dead}
		rep := run(svcs, healthyNode(n, r, t0))
		row := rep.Nodes[0]
		if row.Status != Drift || rep.Status != Drift || findings(row.Missing) != "endpoint 10.0.0.2:8080" || len(row.Extra) != 0 {
			t.Fatalf("%s: %s, missing %q, extra %q, unchecked %q; want DRIFT missing 10.0.0.2:8080", mode, row.Status, findings(row.Missing), findings(row.Extra), row.Unchecked)
		}
		if d := row.Missing[0].Detail; !strings.Contains(d, "endpoint chain "+dead+" has no DNAT rule") {
			t.Errorf("%s: detail %q", mode, d)
		}
		if !strings.Contains(rep.Diagnosis, "lacks endpoint 10.0.0.2:8080 of default/web:http") || !strings.Contains(rep.Diagnosis, dead+" has no DNAT rule") {
			t.Errorf("%s: diagnosis %q", mode, rep.Diagnosis)
		}
		if ev := row.Evidence[0].Cluster.NoDNAT; len(ev) != 1 || ev[0] != dead {
			t.Errorf("%s: evidence %+v", mode, row.Evidence[0].Cluster)
		}
	}
}

// A chain without DNAT that no missing endpoint explains (named after no
// expected endpoint, or after one another chain still reaches) is a jump
// sending traffic nowhere: extra, drift all the same.
func TestStrayEndpointChainWithoutDNATIsDrift(t *testing.T) {
	svcs := []Service{web("10.0.0.1", "10.0.0.2")}
	n := node("node-a")
	r := programmed(svcs, n)
	r.Mode = proxyread.ModeIptables
	reached := proxyexpect.IptablesEndpointChain(r.Ports[0].Want.Ref, proxyexpect.Endpoint{IP: "10.0.0.2", Port: 8080})
	r.Ports[0].Cluster.NoDNAT = []string{reached, "KUBE-SEP-ZZZZZZZZZZZZZZZZ"}
	row := run(svcs, healthyNode(n, r, t0)).Nodes[0]
	if row.Status != Drift || len(row.Missing) != 0 || findings(row.Extra) != "endpoint 10.0.0.2:8080, endpoint" {
		t.Fatalf("%s, missing %q, extra %q; want DRIFT with two extra jumps", row.Status, findings(row.Missing), findings(row.Extra))
	}
	if !strings.Contains(row.Extra[1].Detail, "KUBE-SEP-ZZZZZZZZZZZZZZZZ has no DNAT rule") {
		t.Errorf("detail %q", row.Extra[1].Detail)
	}
}
