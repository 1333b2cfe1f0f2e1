package proxyread

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// node answers the readers' scripts as the script would, from a table of
// listings by request ("ip chain NAME", "iptables nat CHAIN", ...): a
// request it does not know gets notFound, one in failing what a command
// that exits 1 prints. mangle, when set, rewrites the whole output (a
// broken or hostile node).
type node struct {
	listings map[string]string
	failing  map[string]string
	notFound string
	mangle   func(out []byte, limit int64) []byte
	execs    [][]string // the requests of each exec
}

func (n *node) exec(_ context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
	if len(argv) != 3 || argv[0] != "/bin/sh" || argv[1] != "-c" {
		return nil, fmt.Errorf("unexpected argv %q", argv)
	}
	lines := strings.Split(strings.TrimSuffix(string(stdin), "\n"), "\n")
	nonce := lines[0]
	var b strings.Builder
	var reqs []string
	for _, l := range lines[1:] {
		i, req, _ := strings.Cut(l, " ")
		reqs = append(reqs, req)
		out, rc := n.notFound, 1
		if s, ok := n.listings[req]; ok {
			out, rc = s, 0
		}
		if s, ok := n.failing[req]; ok {
			out, rc = s, 1
		}
		fmt.Fprintf(&b, "@@%s begin %s\n%s\n@@%s end %s %d\n", nonce, i, out, nonce, i, rc)
	}
	n.execs = append(n.execs, reqs)
	out := []byte(b.String())
	if n.mangle != nil {
		return n.mangle(out, limit), nil
	}
	return out, nil
}

// requestsOf are the requests of a script's stdin, without their numbers.
func requestsOf(stdin []byte) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(stdin), "\n"), "\n")[1:] {
		_, req, _ := strings.Cut(l, " ")
		out = append(out, req)
	}
	return out
}

const nftNoSuch = "Error: No such file or directory\nlist chain ip kube-proxy x\n                         ^"

func want4(ns, svc string, port int32, ip string) Want {
	p := proxyexpect.Port{Name: "http", Protocol: corev1.ProtocolTCP, Port: port}
	return Want{Ref: proxyexpect.PortRef{Namespace: ns, Service: svc, Port: "http", Protocol: corev1.ProtocolTCP},
		Family: "IPv4", ClusterIP: ip, Port: p}
}

func nftListing(kind, name string, body ...string) string {
	return "table ip kube-proxy {\n\t" + kind + " " + name + " {\n\t\t" + strings.Join(body, "\n\t\t") + "\n\t}\n}"
}

// nftNode is a node whose nftables hold one port's dispatch to its
// service chain, which DNATs to two endpoints.
func nftNode(w Want) *node {
	c := proxyexpect.NftablesChains(w.Ref)
	return &node{notFound: nftNoSuch, listings: map[string]string{
		"ip element service-ips " + w.ClusterIP + " . tcp . 80": nftListing("map", "service-ips",
			"type ipv4_addr . inet_proto . inet_service : verdict",
			// nft without /etc/protocols prints the key's inet_proto by number.
			"elements = { "+w.ClusterIP+" . 6 . 80 : goto "+c.Cluster+" }"),
		"ip chain " + c.Cluster: nftListing("chain", c.Cluster,
			"ip daddr "+w.ClusterIP+" tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade",
			"meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 8080, 1 : 10.0.0.2 . 8080 }"),
	}}
}

func TestNftablesReadsDispatchAndEndpoints(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	n := nftNode(w)
	r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if err != nil {
		t.Fatal(err)
	}
	c := proxyexpect.NftablesChains(w.Ref)
	p := r.Ports[0]
	if !p.Dispatch || p.DispatchTarget != c.Cluster || p.NoEndpoints || p.Unreadable != "" {
		t.Errorf("dispatch: %+v", p)
	}
	if !p.Cluster.Present || !reflect.DeepEqual(p.Cluster.Endpoints, []string{"10.0.0.1:8080", "10.0.0.2:8080"}) || p.Cluster.Unreadable != "" {
		t.Errorf("cluster chain: %+v", p.Cluster)
	}
	if p.Local.Present || p.Local.Unreadable != "" {
		t.Errorf("local chain: %+v", p.Local)
	}
	wantReqs := []string{"ip element service-ips 172.30.0.1 . tcp . 80", "ip element no-endpoint-services 172.30.0.1 . tcp . 80",
		"ip chain " + c.Cluster, "ip chain " + c.Local}
	if !reflect.DeepEqual(n.execs, [][]string{wantReqs}) || r.Execs != 1 || r.Bytes == 0 {
		t.Errorf("execs %d, bytes %d, requests %q", r.Execs, r.Bytes, n.execs)
	}
}

// A chain claiming an endpoint nobody expects shows it: endpoints are read,
// not derived.
func TestNftablesReportsEndpointsAsListed(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	n := nftNode(w)
	c := proxyexpect.NftablesChains(w.Ref)
	n.listings["ip chain "+c.Local] = nftListing("chain", c.Local,
		"meta l4proto tcp dnat ip to numgen random mod 1 map { 0 : 192.0.2.66 . 1 }")
	r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Ports[0].Local; !got.Present || !reflect.DeepEqual(got.Endpoints, []string{"192.0.2.66:1"}) {
		t.Errorf("local chain: %+v", got)
	}
}

func TestNftablesFollowsEndpointChains(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	n := nftNode(w)
	c := proxyexpect.NftablesChains(w.Ref)
	e1 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.1", Port: 8080})
	e2 := proxyexpect.NftablesEndpointChain(w.Ref, proxyexpect.Endpoint{IP: "10.0.0.2", Port: 8080})
	n.listings["ip chain "+c.Cluster] = nftListing("chain", c.Cluster,
		"ip saddr @affinity-x goto "+e1,
		"numgen random mod 2 vmap { 0 : goto "+e1+", 1 : goto "+e2+" }")
	n.listings["ip chain "+e1] = nftListing("chain", e1, "update @affinity-x { ip saddr }", "meta l4proto tcp dnat to 10.0.0.1:8080")
	// e2 DNATs elsewhere than its name says: the DNAT is what counts.
	n.listings["ip chain "+e2] = nftListing("chain", e2, "meta l4proto tcp dnat to 10.9.9.9:9")
	r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Ports[0].Cluster; !reflect.DeepEqual(got.Endpoints, []string{"10.0.0.1:8080", "10.9.9.9:9"}) {
		t.Errorf("cluster chain: %+v", got)
	}
	if r.Execs != 2 || !reflect.DeepEqual(n.execs[1], []string{"ip chain " + e1, "ip chain " + e2}) {
		t.Errorf("execs %d: %q", r.Execs, n.execs)
	}
	// A jump to a missing endpoint chain: what the chain sends to is unknown.
	delete(n.listings, "ip chain "+e2)
	r, _ = Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if got := r.Ports[0].Cluster; got.Present || got.Endpoints != nil || !strings.Contains(got.Unreadable, "does not exist") {
		t.Errorf("cluster chain with a missing endpoint chain: %+v", got)
	}
}

func iptNode(w Want) *node {
	c := proxyexpect.IptablesChains(w.Ref)
	sep := "KUBE-SEP-AAAAAAAAAAAAAAAA"
	return &node{notFound: "iptables: No chain/target/match by that name.", listings: map[string]string{
		"iptables nat KUBE-SERVICES": "-N KUBE-SERVICES\n" +
			`-A KUBE-SERVICES -d 172.30.0.9/32 -p tcp -m comment --comment "other" -m tcp --dport 80 -j KUBE-SVC-OTHER` + "\n" +
			`-A KUBE-SERVICES -d ` + w.ClusterIP + `/32 -p tcp -m comment --comment "ns/svc:http cluster IP" -m tcp --dport 80 -j ` + c.Cluster + "\n" +
			`-A KUBE-SERVICES -d ` + w.ClusterIP + `/32 -p tcp -m tcp --dport 80 -j KUBE-SVC-SHADOWED`,
		"iptables filter KUBE-SERVICES": "-N KUBE-SERVICES",
		"iptables nat " + c.Cluster: "-N " + c.Cluster + "\n" +
			`-A ` + c.Cluster + ` ! -s 10.0.0.0/8 -d ` + w.ClusterIP + `/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ` + "\n" +
			`-A ` + c.Cluster + ` -m comment --comment "ns/svc:http -> 10.0.0.1:8080" -j ` + sep + "\n" +
			// a comment that jumps only if its escaped quotes are misread
			`-A ` + c.Cluster + ` -j KUBE-MARK-MASQ -m comment --comment "x\" -j KUBE-SEP-EVIL \""`,
		"iptables nat " + sep: "-N " + sep + "\n" +
			`-A ` + sep + ` -s 10.0.0.1/32 -m comment --comment "a \"quoted\" word" -j KUBE-MARK-MASQ` + "\n" +
			`-A ` + sep + ` -p tcp -m tcp -j DNAT --to-destination 10.0.0.1:8080`,
	}}
}

func TestIptablesReadsDispatchAndEndpoints(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	n := iptNode(w)
	r, err := Iptables{}.Read(context.Background(), n.exec, []Want{w})
	if err != nil {
		t.Fatal(err)
	}
	c := proxyexpect.IptablesChains(w.Ref)
	p := r.Ports[0]
	if !p.Dispatch || p.DispatchTarget != c.Cluster || p.NoEndpoints || p.Unreadable != "" {
		t.Errorf("dispatch (the first matching rule): %+v", p)
	}
	if !p.Cluster.Present || !reflect.DeepEqual(p.Cluster.Endpoints, []string{"10.0.0.1:8080"}) {
		t.Errorf("cluster chain: %+v", p.Cluster)
	}
	if p.Local.Present || p.Local.Unreadable != "" || r.Execs != 2 {
		t.Errorf("local chain %+v, %d execs", p.Local, r.Execs)
	}
	// A listing holding another chain's rule is not the chain's.
	n.listings["iptables nat "+c.Cluster] += "\n-A KUBE-SVC-OTHER -j KUBE-MARK-MASQ"
	r, _ = Iptables{}.Read(context.Background(), n.exec, []Want{w})
	if got := r.Ports[0].Cluster; got.Present || got.Unreadable == "" {
		t.Errorf("a listing with another chain's rule: %+v", got)
	}
	// No endpoints: the filter table's REJECT, no dispatch.
	n.listings["iptables nat KUBE-SERVICES"] = "-N KUBE-SERVICES"
	n.listings["iptables filter KUBE-SERVICES"] = "-N KUBE-SERVICES\n" +
		`-A KUBE-SERVICES -d ` + w.ClusterIP + `/32 -p tcp -m comment --comment "ns/svc:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable`
	r, _ = Iptables{}.Read(context.Background(), n.exec, []Want{w})
	if p := r.Ports[0]; p.Dispatch || !p.NoEndpoints || p.NoEndpointsVerdict != "reject" {
		t.Errorf("no endpoints: %+v", p)
	}
}

// The execs are two whatever the number of ports: the readers batch every
// port into one script's input.
func TestExecsAreConstant(t *testing.T) {
	var wants []Want
	for i := 0; i < 1000; i++ {
		wants = append(wants, want4("ns", fmt.Sprintf("svc%d", i), 80, fmt.Sprintf("172.30.%d.%d", i/250, i%250+1)))
	}
	n := iptNode(wants[0])
	r, err := Iptables{Targeted: 1000}.Read(context.Background(), n.exec, wants)
	if err != nil || r.Execs != 2 || len(n.execs[0]) != 2+2*1000 {
		t.Errorf("iptables, targeted: %v, %d execs, %d requests", err, r.Execs, len(n.execs[0]))
	}
	n = iptSaveNode(iptNode(wants[0]))
	r, err = Iptables{}.Read(context.Background(), n.exec, wants)
	if err != nil || r.Execs != 1 || !reflect.DeepEqual(n.execs, [][]string{{"iptables-save nat", "iptables-save filter"}}) ||
		!reflect.DeepEqual(r.Ports[0].Cluster.Endpoints, []string{"10.0.0.1:8080"}) {
		t.Errorf("iptables, whole tables: %v, %d execs, requests %q, %+v", err, r.Execs, n.execs, r.Ports[0])
	}
	n = nftNode(wants[0])
	r, err = Nftables{Targeted: 1000}.Read(context.Background(), n.exec, wants)
	if err != nil || r.Execs != 1 || len(n.execs[0]) != 4*1000 {
		t.Errorf("nftables, targeted: %v, %d execs, %d requests", err, r.Execs, len(n.execs[0]))
	}
	n = nftNode(wants[0])
	r, err = Nftables{}.Read(context.Background(), n.exec, wants)
	if err != nil || r.Execs != 1 || !reflect.DeepEqual(n.execs, [][]string{{"ip table kube-proxy"}}) {
		t.Errorf("nftables, whole table: %v, %d execs, requests %q", err, r.Execs, n.execs)
	}
}

// hostile is one way a node's answer goes wrong.
type hostile struct {
	name   string
	mangle func(out []byte, limit int64) []byte
}

var hostiles = []hostile{
	{"garbage", func([]byte, int64) []byte { return []byte("\x00\xff}{ table ip kube-proxy {\n\tchain x {\n") }},
	{"empty", func([]byte, int64) []byte { return nil }},
	{"cut early", func(out []byte, _ int64) []byte { return out[:40] }},
	{"over its limit", func(out []byte, _ int64) []byte {
		return []byte(strings.Replace(string(out), " begin 0\n", " begin 0\n"+strings.Repeat("x", 2000)+"\n", 1))
	}},
	{"a forged marker", func(out []byte, _ int64) []byte {
		s := strings.ReplaceAll(string(out), "\n\t", "\n@@0000000000000000 end 0 0\n\t")
		return []byte(strings.ReplaceAll(s, "\n-A ", "\n@@0000000000000000 end 0 0\n-A "))
	}},
	{"answers out of order", func(out []byte, _ int64) []byte {
		return []byte(strings.Replace(string(out), " begin 0\n", " begin 1\n", 1))
	}},
	{"a bad exit code", func(out []byte, _ int64) []byte {
		return []byte(strings.Replace(string(out), " end 0 0\n", " end 0 x\n", 1))
	}},
}

// A broken or hostile node's answer never makes a chain present, a
// dispatch read or an endpoint appear that the node did not list in
// full; the reading says why.
func TestHostileAnswersAreUnreadable(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	for _, h := range hostiles {
		for mode, mk := range map[Mode]func(Want) *node{ModeNftables: nftNode, ModeIptables: iptNode} {
			n := mk(w)
			n.mangle = h.mangle
			reader, _ := For(mode, Limits{ExecBytes: 1 << 10})
			r, err := reader.Read(context.Background(), n.exec, []Want{w})
			if err != nil {
				t.Errorf("%s %s: %v", mode, h.name, err)
				continue
			}
			p := r.Ports[0]
			if p.Dispatch || p.Cluster.Present || p.Cluster.Endpoints != nil || p.Local.Present {
				t.Errorf("%s %s: read as present: %+v", mode, h.name, p)
			}
			if p.Unreadable == "" || p.Cluster.Unreadable == "" {
				t.Errorf("%s %s: no reason given: %+v", mode, h.name, p)
			}
		}
	}
}

func TestBoundsMakeListingsUnreadable(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.NftablesChains(w.Ref)
	long := nftNode(w)
	long.listings["ip chain "+c.Cluster] = nftListing("chain", c.Cluster, "meta l4proto tcp dnat to 10.0.0.1:80 "+strings.Repeat("x", 300))
	many := nftNode(w)
	many.listings["ip chain "+c.Cluster] = nftListing("chain", c.Cluster, strings.Repeat("counter\n", 50))
	for name, n := range map[string]*node{"a long line": long, "many lines": many} {
		r, err := Nftables{Limits: Limits{LineBytes: 200, Lines: 20}}.Read(context.Background(), n.exec, []Want{w})
		if got := r.Ports[0].Cluster; err != nil || got.Present || !strings.Contains(got.Unreadable, "over") {
			t.Errorf("%s: %v %+v", name, err, got)
		}
		if !r.Ports[0].Dispatch {
			t.Errorf("%s: the dispatch, within bounds, was not read", name)
		}
	}
}

func TestMalformedListings(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.NftablesChains(w.Ref)
	for name, body := range map[string]string{
		"another chain":      strings.Replace(nftNode(w).listings["ip chain "+c.Cluster], c.Cluster, c.Local, 1),
		"another table":      strings.Replace(nftListing("chain", c.Cluster, "counter"), "kube-proxy", "other", 1),
		"duplicate index":    nftListing("chain", c.Cluster, "meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 0 : 10.0.0.2 . 80 }"),
		"count mismatch":     nftListing("chain", c.Cluster, "meta l4proto tcp dnat ip to numgen random mod 3 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }"),
		"bad address":        nftListing("chain", c.Cluster, "meta l4proto tcp dnat to 10.0.0.300:80"),
		"port zero":          nftListing("chain", c.Cluster, "meta l4proto tcp dnat to 10.0.0.1:0"),
		"unbalanced":         nftListing("chain", c.Cluster, "numgen random mod 1 vmap { 0 : goto endpoint-x"),
		"unknown dnat":       nftListing("chain", c.Cluster, "dnat ip to 10.0.0.1 . 80 map"),
		"a permission error": "Error: Operation not permitted",
	} {
		n := nftNode(w)
		n.listings["ip chain "+c.Cluster] = body
		r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
		if got := r.Ports[0].Cluster; err != nil || got.Present || got.Endpoints != nil || got.Unreadable == "" {
			t.Errorf("%s: %v %+v", name, err, got)
		}
	}
	n := nftNode(w)
	n.listings["ip element service-ips 172.30.0.1 . tcp . 80"] = nftListing("map", "service-ips",
		"elements = { 172.30.0.2 . tcp . 80 : goto "+c.Cluster+" }")
	r, _ := Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if p := r.Ports[0]; p.Dispatch || p.Unreadable == "" {
		t.Errorf("an element of another key: %+v", p)
	}
}

// A command that fails saying anything but "no such object" leaves what
// it should have shown unreadable, never absent.
func TestFailedCommandIsUnreadable(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	nc, ic := proxyexpect.NftablesChains(w.Ref), proxyexpect.IptablesChains(w.Ref)
	n := nftNode(w)
	n.failing = map[string]string{"ip chain " + nc.Cluster: "Error: Operation not permitted"}
	r, err := Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if got := r.Ports[0].Cluster; err != nil || got.Present || !strings.Contains(got.Unreadable, "exit code 1: Error: Operation not permitted") {
		t.Errorf("nft chain: %v %+v", err, got)
	}
	n = nftNode(w)
	n.failing = map[string]string{"ip element service-ips 172.30.0.1 . tcp . 80": "Error: Operation not permitted"}
	r, err = Nftables{}.Read(context.Background(), n.exec, []Want{w})
	if p := r.Ports[0]; err != nil || p.Dispatch || !strings.Contains(p.Unreadable, "service-ips: exit code 1") {
		t.Errorf("nft element: %v %+v", err, p)
	}
	n = iptNode(w)
	n.failing = map[string]string{"iptables nat " + ic.Cluster: "iptables: Permission denied (you must be root)."}
	r, err = Iptables{}.Read(context.Background(), n.exec, []Want{w})
	if got := r.Ports[0].Cluster; err != nil || got.Present || !strings.Contains(got.Unreadable, "exit code 1: iptables: Permission denied") {
		t.Errorf("iptables chain: %v %+v", err, got)
	}
}

func TestExecErrorIsAnError(t *testing.T) {
	failing := func(context.Context, []string, []byte, int64) ([]byte, error) {
		return []byte("partial"), errors.New("exit code 137")
	}
	w := want4("ns", "svc", 80, "172.30.0.1")
	for _, reader := range []Reader{Nftables{}, Iptables{}} {
		r, err := reader.Read(context.Background(), failing, []Want{w})
		if err == nil || r.Execs != 1 || r.Bytes != 7 {
			t.Errorf("%T: %v, %d execs, %d bytes", reader, err, r.Execs, r.Bytes)
		}
	}
}

func TestBadWantsAreUnreadableAndNotAsked(t *testing.T) {
	bad := []Want{want4("ns", "svc", 80, "not-an-ip"), want4("ns", "svc", 0, "172.30.0.1"), want4("ns", "svc", 80, "fd00::1"),
		want4("ns", "bad name", 80, "172.30.0.1")}
	bad[3].Ref.Service = "bad name\n1 ip chain x" // a name only nftables chains spell out
	for _, reader := range []Reader{Nftables{}, Iptables{}} {
		if _, ipt := reader.(Iptables); ipt {
			bad = bad[:3]
		}
		n := nftNode(bad[0])
		r, err := reader.Read(context.Background(), n.exec, bad)
		if err != nil || r.Execs != 0 {
			t.Errorf("%T: %v, %d execs", reader, err, r.Execs)
		}
		for i, p := range r.Ports {
			if p.Unreadable == "" {
				t.Errorf("%T: want %d read: %+v", reader, i, p)
			}
		}
	}
}

// tableOf lists a node's chains and map elements as one `nft list table`.
func tableOf(n *node) string {
	lines := []string{"table ip kube-proxy {", "\tcomment \"rules for kube-proxy\""}
	elems := map[string][]string{}
	for _, req := range sortedKeys(n.listings) {
		body := strings.Split(n.listings[req], "\n")
		inner := body[1 : len(body)-1]
		if strings.HasPrefix(req, "ip element ") {
			m := strings.Fields(req)[2]
			for _, l := range inner {
				if e, ok := strings.CutPrefix(strings.TrimSpace(l), "elements = { "); ok {
					elems[m] = append(elems[m], strings.TrimSuffix(e, " }"))
				}
			}
			continue
		}
		lines = append(lines, inner...)
	}
	for _, m := range sortedKeys(elems) {
		lines = append(lines, "\tmap "+m+" {", "\t\ttype ipv4_addr . inet_proto . inet_service : verdict",
			"\t\telements = { "+strings.Join(elems[m], ",\n\t\t\t     ")+" }", "\t}")
	}
	return strings.Join(append(lines, "}"), "\n")
}

// The whole table, split, reads as the targeted listings do.
func TestNftablesWholeTableReadsAsTargeted(t *testing.T) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	w2 := want4("ns", "other", 53, "172.30.0.2")
	n := nftNode(w)
	c2 := proxyexpect.NftablesChains(w2.Ref)
	n.listings["ip element no-endpoint-services 172.30.0.2 . tcp . 53"] = nftListing("map", "no-endpoint-services",
		`elements = { 172.30.0.2 . 6 . 53 comment "ns/other:http" : drop }`)
	e := proxyexpect.NftablesEndpointChain(w2.Ref, proxyexpect.Endpoint{IP: "10.0.0.7", Port: 53})
	n.listings["ip chain "+c2.Local] = nftListing("chain", c2.Local, "numgen random mod 1 vmap { 0 : goto "+e+" }")
	n.listings["ip chain "+e] = nftListing("chain", e, "meta l4proto tcp dnat to 10.0.0.7:53")
	// An element of the same IP and a port it prefixes, asked of no one.
	n.listings["ip element service-ips 172.30.0.1 . tcp . 8080"] = nftListing("map", "service-ips",
		"elements = { 172.30.0.1 . tcp . 8080 : goto service-X-ns/x/tcp/http }")
	want, err := Nftables{Targeted: 10}.Read(context.Background(), n.exec, []Want{w, w2})
	if err != nil || want.Execs != 2 {
		t.Fatalf("targeted: %v, %d execs", err, want.Execs)
	}
	whole := &node{notFound: nftNoSuch, listings: map[string]string{"ip table kube-proxy": tableOf(n)}}
	got, err := Nftables{Targeted: -1}.Read(context.Background(), whole.exec, []Want{w, w2})
	if err != nil || got.Execs != 1 {
		t.Fatalf("whole table: %v, %d execs", err, got.Execs)
	}
	if !reflect.DeepEqual(got.Ports, want.Ports) {
		t.Errorf("the whole table reads\n%+v\nthe targeted listings\n%+v", got.Ports, want.Ports)
	}
	if p := got.Ports[1]; !p.NoEndpoints || p.NoEndpointsVerdict != "drop" || !reflect.DeepEqual(p.Local.Endpoints, []string{"10.0.0.7:53"}) {
		t.Errorf("second port: %+v", p)
	}
	// A table listing an object twice, or cut, is unreadable as a whole.
	for name, table := range map[string]string{
		"twice": strings.Replace(tableOf(n), "\tmap service-ips {", "\tchain "+proxyexpect.NftablesChains(w.Ref).Cluster+" {\n\t}\n\tmap service-ips {", 1),
		"cut":   tableOf(n)[:len(tableOf(n))/2],
	} {
		whole.listings["ip table kube-proxy"] = table
		r, err := Nftables{Targeted: -1}.Read(context.Background(), whole.exec, []Want{w, w2})
		for _, p := range r.Ports {
			if err != nil || p.Dispatch || p.Cluster.Present || p.Unreadable == "" || p.Cluster.Unreadable == "" {
				t.Errorf("%s: %v %+v", name, err, p)
			}
		}
	} // A map listing the wanted key twice (two verdicts): no dispatch is read.
	whole.listings["ip table kube-proxy"] = strings.Replace(tableOf(n), "elements = { 172.30.0.1 . 6 . 80 : goto ",
		"elements = { 172.30.0.1 . 6 . 80 : goto service-X-ns/x/tcp/http, 172.30.0.1 . tcp . 80 : goto ", 1)
	r, err := Nftables{Targeted: -1}.Read(context.Background(), whole.exec, []Want{w, w2})
	if p := r.Ports[0]; err != nil || p.Dispatch || !strings.Contains(p.Unreadable, "twice") {
		t.Errorf("an element listed twice: %v %+v", err, p)
	}
}
