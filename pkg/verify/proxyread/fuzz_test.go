package proxyread

import (
	"context"
	"net/netip"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// FuzzParseAnswers answers every request of both readers with the same
// fuzzed listing and exit code, and splits fuzzed script output: nothing
// panics, no chain is both unreadable and present, every endpoint read is
// an address and port, and the execs stay two.
func FuzzParseAnswers(f *testing.F) {
	w := want4("ns", "svc", 80, "172.30.0.1")
	c := proxyexpect.NftablesChains(w.Ref)
	f.Add([]byte(nftListing("chain", c.Cluster, "meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 80 }")), uint8(0))
	f.Add([]byte(nftListing("map", "service-ips", "elements = { 172.30.0.1 . tcp . 80 : goto "+c.Cluster+" }")), uint8(0))
	f.Add([]byte(nftListing("chain", c.Cluster, "numgen random mod 1 vmap { 0 : goto endpoint-x }")), uint8(0))
	f.Add([]byte("-N KUBE-SERVICES\n-A KUBE-SERVICES -d 172.30.0.1/32 -p tcp -m comment --comment \"a\\\"b\" --dport 80 -j KUBE-SVC-X"), uint8(0))
	f.Add([]byte("-N KUBE-SEP-X\n-A KUBE-SEP-X -p tcp -j DNAT --to-destination [fd00::1]:80"), uint8(0))
	f.Add([]byte("Error: No such file or directory"), uint8(1))
	f.Add([]byte("table ip kube-proxy {\n\tmap service-ips {\n\t\telements = { 172.30.0.1 . tcp . 80 : goto x,\n\t\t\t1.2.3.4 . udp . 53 : drop }\n\t}\n\tchain "+c.Cluster+" {\n\t\tdnat to 10.0.0.1:80\n\t}\n}"), uint8(0))
	f.Add([]byte("@@n begin 0\nx\n@@n end 0 0\n@@n begin 1\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, rc uint8) {
		lim := Limits{ExecBytes: 1 << 16, LineBytes: 1 << 12, Lines: 100, EndpointChains: 10}
		for _, a := range splitAnswers(string(data), "n", 3, lim) {
			if a.missing != "" && a.out != nil {
				t.Fatalf("an answer both missing and read: %+v", a)
			}
		}
		exec := func(_ context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
			n := &node{notFound: string(data)}
			if rc == 0 {
				n.listings = map[string]string{}
				for _, req := range requestsOf(stdin) {
					n.listings[req] = string(data)
				}
			}
			return n.exec(context.Background(), argv, stdin, limit)
		}
		for _, reader := range []Reader{Nftables{Limits: lim, Targeted: 10}, Nftables{Limits: lim, Targeted: -1}, Iptables{Limits: lim}, Iptables{Limits: lim, Targeted: -1}} {
			r, err := reader.Read(context.Background(), exec, []Want{w})
			if err != nil || r.Execs > 2 {
				t.Fatalf("%T: %v, %d execs", reader, err, r.Execs)
			}
			for _, ch := range []Chain{r.Ports[0].Cluster, r.Ports[0].Local} {
				if ch.Unreadable != "" && (ch.Present || ch.Endpoints != nil) {
					t.Fatalf("%T: unreadable and read: %+v", reader, ch)
				}
				for _, ep := range ch.Endpoints {
					if _, err := netip.ParseAddrPort(ep); err != nil {
						t.Fatalf("%T: endpoint %q", reader, ep)
					}
				}
			}
		}
	})
}
