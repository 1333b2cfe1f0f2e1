package proxyread

import (
	"context"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// TestNftablesHostileServiceChain: a service chain holding a rule
// kube-proxy does not write, or a numgen vmap not covering exactly its
// indexes, is unreadable, never present with the expected endpoints.
func TestNftablesHostileServiceChain(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.NftablesChains(w.Ref)
	e1 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.1", Port: 8080})
	e2 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.2", Port: 8080})
	dnatMap := "meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 8080, 1 : 10.0.0.2 . 8080 }"
	vmap := "numgen random mod 2 vmap { 0 : goto " + e1 + ", 1 : goto " + e2 + " }"
	for _, tc := range []struct {
		name  string
		rules []string
		ok    bool
	}{
		{"dnat map", []string{dnatMap}, true},
		{"dnat map, protocol by number as nft prints it without /etc/protocols", []string{strings.Replace(dnatMap, "l4proto tcp", "l4proto 6", 1)}, true},
		{"affinity vmap", []string{"ip saddr @affinity-x goto " + e1, "ip saddr @affinity-y goto " + e2, vmap}, true},
		{"masquerade mark", []string{"ip daddr 172.30.0.1 jump mark-for-masquerade", dnatMap}, true},
		{"drop first", []string{"drop", dnatMap}, false},
		{"dnat before a masquerade mark", []string{"meta l4proto tcp dnat to 192.0.2.66:1 jump mark-for-masquerade", dnatMap}, false},
		{"return first", []string{"return", dnatMap}, false},
		{"accept first", []string{"ip saddr 10.1.0.0/16 accept", dnatMap}, false},
		{"jump elsewhere", []string{"jump evil", dnatMap}, false},
		{"vmap mod 3", []string{"numgen random mod 3 vmap { 0 : goto " + e1 + ", 1 : goto " + e2 + " }"}, false},
		{"vmap goto foreign", []string{"numgen random mod 3 vmap { 0 : goto " + e1 + ", 1 : goto " + e2 + ", 2 : goto evil }"}, false},
		{"vmap drop", []string{"numgen random mod 3 vmap { 0 : goto " + e1 + ", 1 : goto " + e2 + ", 2 : drop }"}, false},
		{"affinity goto foreign", []string{"ip saddr @affinity-x goto evil", vmap}, false},
		{"single dnat in a service chain", []string{"meta l4proto tcp dnat to 192.0.2.66:1", dnatMap}, false},
	} {
		n := nftNode(w)
		n.listings["ip chain "+c.Cluster] = nftListing("chain", c.Cluster, tc.rules...)
		n.listings["ip chain "+e1] = nftListing("chain", e1, "update @affinity-x { ip saddr }", "meta l4proto tcp dnat to 10.0.0.1:8080")
		n.listings["ip chain "+e2] = nftListing("chain", e2, "meta l4proto tcp dnat to 10.0.0.2:8080")
		n.listings["ip chain evil"] = nftListing("chain", "evil", "meta l4proto tcp dnat to 192.0.2.66:1")
		r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := r.Ports[0].Cluster
		if tc.ok && (!got.Present || strings.Join(got.Endpoints, ",") != "10.0.0.1:8080,10.0.0.2:8080") {
			t.Errorf("%s: kube-proxy's own chain reads as %+v", tc.name, got)
		}
		if !tc.ok && (got.Present || got.Unreadable == "") {
			t.Errorf("%s: a hostile chain reads as %+v, want unreadable", tc.name, got)
		}
	}
}

// TestNftablesHostileEndpointChain: an endpoint chain that drops or
// returns before its dnat is unreadable, and so is the chain going to it.
func TestNftablesHostileEndpointChain(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.NftablesChains(w.Ref)
	e1 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.1", Port: 8080})
	for _, first := range []string{"drop", "return", "goto evil", "meta l4proto tcp dnat ip to numgen random mod 1 map { 0 : 10.0.0.1 . 8080 }"} {
		n := nftNode(w)
		n.listings["ip chain "+c.Cluster] = nftListing("chain", c.Cluster, "numgen random mod 1 vmap { 0 : goto "+e1+" }")
		n.listings["ip chain "+e1] = nftListing("chain", e1, first, "meta l4proto tcp dnat to 10.0.0.1:8080")
		r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
		if got := r.Ports[0].Cluster; err != nil || got.Present || got.Unreadable == "" {
			t.Errorf("endpoint chain starting with %q: %v, service chain %+v, want unreadable", first, err, got)
		}
	}
}

// TestIptablesHostileServiceChain: a KUBE-SVC- chain jumping elsewhere
// than KUBE-SEP- and KUBE-MARK-MASQ, or whose last endpoint jump is
// conditional, is unreadable.
func TestIptablesHostileServiceChain(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.IptablesChains(w.Ref)
	sep1, sep2 := "KUBE-SEP-AAAAAAAAAAAAAAAA", "KUBE-SEP-BBBBBBBBBBBBBBBB"
	masq := "-A " + c.Cluster + " ! -s 10.0.0.0/8 -d 172.30.0.1/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ"
	stat := func(p, to string) string {
		return "-A " + c.Cluster + ` -m comment --comment "ns/svc:http -> x" -m statistic --mode random --probability ` + p + " -j " + to
	}
	last := "-A " + c.Cluster + ` -m comment --comment "ns/svc:http -> 10.0.0.2:8080" -j ` + sep2
	affinity := "-A " + c.Cluster + " -m comment --comment x -m recent --name " + sep1 + " --rcheck --seconds 10800 --reap -j " + sep1
	for _, tc := range []struct {
		name  string
		rules []string
		ok    bool
	}{
		{"kube-proxy's", []string{masq, stat("0.50000000000", sep1), last}, true},
		{"with affinity", []string{masq, affinity, stat("0.50000000000", sep1), last}, true},
		{"statistic jump elsewhere", []string{stat("0.5", "KUBE-EVIL"), last}, false},
		{"last jump conditional", []string{stat("0.5", sep1), stat("0.5", sep2)}, false},
		{"last jump with a match", []string{stat("0.5", sep1), "-A " + c.Cluster + " -s 10.1.0.0/16 -j " + sep2}, false},
		{"return", []string{"-A " + c.Cluster + " -j RETURN", stat("0.5", sep1), last}, false},
		{"accept", []string{"-A " + c.Cluster + " -s 10.1.0.0/16 -j ACCEPT", stat("0.5", sep1), last}, false},
		{"drop", []string{"-A " + c.Cluster + " -j DROP", stat("0.5", sep1), last}, false},
		{"dnat in a service chain", []string{"-A " + c.Cluster + " -p tcp -j DNAT --to-destination 192.0.2.66:1", stat("0.5", sep1), last}, false},
	} {
		n := iptNode(w)
		n.listings["iptables nat "+c.Cluster] = "-N " + c.Cluster + "\n" + strings.Join(tc.rules, "\n")
		n.listings["iptables nat "+sep1] = "-N " + sep1 + "\n-A " + sep1 + " -s 10.0.0.1/32 -j KUBE-MARK-MASQ\n-A " + sep1 + " -p tcp -m recent --name " + sep1 + " --set -m tcp -j DNAT --to-destination 10.0.0.1:8080"
		n.listings["iptables nat "+sep2] = "-N " + sep2 + "\n-A " + sep2 + " -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:8080"
		r, err := Iptables{}.Read(context.Background(), n.exec, []Want{w})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := r.Ports[0].Cluster
		if tc.ok && (!got.Present || strings.Join(got.Endpoints, ",") != "10.0.0.1:8080,10.0.0.2:8080") {
			t.Errorf("%s: kube-proxy's own chain reads as %+v", tc.name, got)
		}
		if !tc.ok && (got.Present || got.Unreadable == "") {
			t.Errorf("%s: a hostile chain reads as %+v, want unreadable", tc.name, got)
		}
	}
}

// TestIptablesHostileEndpointChain: a KUBE-SEP- chain with a second DNAT
// or a RETURN is unreadable, and so is the chain jumping to it.
func TestIptablesHostileEndpointChain(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.IptablesChains(w.Ref)
	sep := "KUBE-SEP-AAAAAAAAAAAAAAAA"
	for _, first := range []string{"-j RETURN", "-p tcp -j DNAT --to-destination 192.0.2.66:1", "-j KUBE-EVIL"} {
		n := iptNode(w)
		n.listings["iptables nat "+c.Cluster] = "-N " + c.Cluster + "\n-A " + c.Cluster + " -j " + sep
		n.listings["iptables nat "+sep] = "-N " + sep + "\n-A " + sep + " " + first + "\n-A " + sep + " -p tcp -m tcp -j DNAT --to-destination 10.0.0.1:8080"
		r, err := Iptables{}.Read(context.Background(), n.exec, []Want{w})
		if got := r.Ports[0].Cluster; err != nil || got.Present || got.Unreadable == "" {
			t.Errorf("endpoint chain starting with %q: %v, service chain %+v, want unreadable", first, err, got)
		}
	}
}

// TestEndpointChainWithoutDNATIsRead: an endpoint chain read whole whose
// DNAT was deleted (its masquerade or affinity rule left) is known, not
// unreadable: the service chain stays read, with the other chains'
// endpoints and that chain in NoDNAT.
func TestEndpointChainWithoutDNATIsRead(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.IptablesChains(w.Ref)
	sep1, sep2 := "KUBE-SEP-AAAAAAAAAAAAAAAA", "KUBE-SEP-BBBBBBBBBBBBBBBB"
	n := iptNode(w)
	n.listings["iptables nat "+c.Cluster] = "-N " + c.Cluster + "\n-A " + c.Cluster + " -m statistic --mode random --probability 0.5 -j " + sep1 +
		"\n-A " + c.Cluster + " -j " + sep2
	n.listings["iptables nat "+sep2] = "-N " + sep2 + "\n-A " + sep2 + " -s 10.0.0.2/32 -j KUBE-MARK-MASQ"
	r, err := Iptables{}.Read(context.Background(), n.exec, []Want{w})
	if got := r.Ports[0].Cluster; err != nil || !got.Present || got.Unreadable != "" || strings.Join(got.Endpoints, ",") != "10.0.0.1:8080" ||
		strings.Join(got.NoDNAT, ",") != sep2 {
		t.Errorf("iptables: %v, service chain %+v, want read with %s in NoDNAT", err, got, sep2)
	}

	nc := proxyexpect.NftablesChains(w.Ref)
	e1 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.1", Port: 8080})
	e2 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.2", Port: 8080})
	nn := nftNode(w)
	nn.listings["ip chain "+nc.Cluster] = nftListing("chain", nc.Cluster, "numgen random mod 2 vmap { 0 : goto "+e1+", 1 : goto "+e2+" }")
	nn.listings["ip chain "+e1] = nftListing("chain", e1, "meta l4proto tcp dnat to 10.0.0.1:8080")
	nn.listings["ip chain "+e2] = nftListing("chain", e2, "update @affinity-x { ip saddr }")
	r, err = Nftables{}.Read(context.Background(), nn.exec, []Want{w})
	if got := r.Ports[0].Cluster; err != nil || !got.Present || got.Unreadable != "" || strings.Join(got.Endpoints, ",") != "10.0.0.1:8080" ||
		strings.Join(got.NoDNAT, ",") != e2 {
		t.Errorf("nftables: %v, service chain %+v, want read with %s in NoDNAT", err, got, e2)
	}
}
