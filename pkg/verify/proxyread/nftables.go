package proxyread

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// NftablesScript answers requests "I FAMILY chain NAME" with
// `nft list chain FAMILY kube-proxy NAME`, "I FAMILY element MAP KEY..."
// with `nft get element FAMILY kube-proxy MAP { KEY }` and "I FAMILY table
// kube-proxy" with `nft list table FAMILY kube-proxy`, one nft process a
// request: nft -f stops at the first missing object and nft -i does not
// say which output is whose. Every word comes from stdin and is quoted, so
// nothing a name holds reaches the shell as syntax; nft reads no stdin.
const NftablesScript = `read -r n || exit 2
while read -r i fam kind name key; do
case $kind in
chain) out=$(nft list chain "$fam" kube-proxy "$name" </dev/null 2>&1) ;;
element) out=$(nft get element "$fam" kube-proxy "$name" "{ $key }" </dev/null 2>&1) ;;
table) out=$(nft list table "$fam" kube-proxy </dev/null 2>&1) ;;
*) out="bad request"; false ;;
esac
rc=$?
printf '@@%s begin %s\n%s\n@@%s end %s %s\n' "$n" "$i" "$out" "$n" "$i" "$rc"
done
`

// Nftables reads kube-proxy's nftables mode, one of two ways.
//
// Targeted (at most Targeted wanted ports): in one exec, for each
// wanted port, its cluster IP's service-ips and no-endpoint-services
// elements and its service- and local- chains; in a second exec, only for
// ports with session affinity, the endpoint- chains those chains jump to
// (without affinity a service chain DNATs through its own map, kube-proxy
// 1.36).
//
// Whole table (more ports): one exec listing the kube-proxy table of each
// wanted family once, the same requests answered from it. nft 1.0.6
// (Debian bookworm) fetches every rule of the table for one `list chain`
// (measured: 6 s for one chain of a 10,000-Service table, as long as the
// whole listing; 30 ms at 1,000 Services) and cannot batch listings (nft -f
// fails every `list chain` but the last, nft -i refetches for each), so
// past a few ports one listing of the table is the cheaper read.
type Nftables struct {
	Limits Limits
	// Targeted is the most wanted ports read chain by chain: 0 means
	// DefaultTargeted, a negative value none (the table always).
	Targeted int
}

// DefaultTargeted: each targeted port costs four nft processes, each of
// which may fetch the whole table.
const DefaultTargeted = 4

// answers returns the answers to requests ("ip chain NAME", ...).
type answers func(ctx context.Context, reqs []string) (func(string) answer, error)

func (n Nftables) Read(ctx context.Context, exec Exec, want []Want) (Reading, error) {
	lim := n.Limits.orDefault()
	r := Reading{Mode: ModeNftables, Ports: make([]PortState, len(want))}
	ask := targeted(exec, NftablesScript, lim, &r)
	if n.whole(len(want)) {
		ask = wholeTables(exec, lim, &r)
	}
	var reqs []string
	for i, w := range want {
		r.Ports[i] = PortState{Want: w}
		fam, key, err := nftKey(w)
		if err != nil {
			r.Ports[i].Unreadable = err.Error()
			continue
		}
		c := proxyexpect.NftablesChains(w.Ref)
		reqs = append(reqs,
			fam+" element "+proxyexpect.NftablesServiceIPsMap+" "+key,
			fam+" element "+proxyexpect.NftablesNoEndpointServices+" "+key,
			fam+" chain "+c.Cluster, fam+" chain "+c.Local)
	}
	get, err := ask(ctx, reqs)
	if err != nil {
		return r, err
	}
	for i := range want {
		p := &r.Ports[i]
		if p.Unreadable != "" {
			continue
		}
		fam, key, _ := nftKey(want[i])
		c := proxyexpect.NftablesChains(want[i].Ref)
		nftDispatch(p, get(fam+" element "+proxyexpect.NftablesServiceIPsMap+" "+key),
			get(fam+" element "+proxyexpect.NftablesNoEndpointServices+" "+key), fam, key)
		p.Cluster = nftChain(get(fam+" chain "+c.Cluster), fam, c.Cluster, lim)
		p.Local = nftChain(get(fam+" chain "+c.Local), fam, c.Local, lim)
	}
	return r, readEndpointChains(ctx, ask, &r, nftEndpointChains, lim)
}

// nftEndpointChains: the endpoint- chains of the family's table, each
// listed as its service chain is.
var nftEndpointChains = endpointChains{
	jumps: nftJumps,
	req:   func(family, chain string) string { return nftFamily(family) + " chain " + chain },
	chain: func(a answer, req string, lim Limits) Chain {
		f := strings.Fields(req)
		return nftChain(a, f[0], f[2], lim)
	},
}

// whole: the table is listed for this many wanted ports.
func (n Nftables) whole(ports int) bool {
	most := n.Targeted
	if most == 0 {
		most = DefaultTargeted
	}
	return ports > most
}

// targeted answers requests with one exec of script.
func targeted(exec Exec, script string, lim Limits, r *Reading) answers {
	return func(ctx context.Context, reqs []string) (func(string) answer, error) {
		ans, err := round(ctx, exec, script, reqs, lim, r)
		if err != nil {
			return nil, err
		}
		at := make(map[string]int, len(reqs))
		for i, q := range reqs {
			at[q] = i
		}
		return func(q string) answer { return ans[at[q]] }, nil
	}
}

// endpointChains is how a mode reads the endpoint chains its service
// chains jump to: the ones a chain's rules jump to, the request that
// lists one for an IP family, and the chain its answer shows.
type endpointChains struct {
	jumps func(rules []string) []string
	req   func(family, chain string) string
	chain func(a answer, req string, lim Limits) Chain
}

// readEndpointChains reads the endpoint chains the service chains of r
// jump to (one more exec, or none from a table already listed), and adds
// their DNAT destinations to those chains' Endpoints.
func readEndpointChains(ctx context.Context, ask answers, r *Reading, ec endpointChains, lim Limits) error {
	wanted := map[string]bool{}
	for i := range r.Ports {
		for _, ch := range []*Chain{&r.Ports[i].Cluster, &r.Ports[i].Local} {
			for _, e := range ec.jumps(ch.Rules) {
				wanted[ec.req(r.Ports[i].Want.Family, e)] = true
			}
		}
	}
	reqs := sortedKeys(wanted)
	if len(reqs) > lim.EndpointChains {
		markJumpers(r, ec.jumps, fmt.Sprintf("over %d endpoint chains", lim.EndpointChains))
		return nil
	}
	if len(reqs) == 0 {
		return nil
	}
	get, err := ask(ctx, reqs)
	if err != nil {
		return err
	}
	dests := make(map[string]Chain, len(reqs))
	for _, req := range reqs {
		dests[req] = ec.chain(get(req), req, lim)
	}
	for i := range r.Ports {
		fam := r.Ports[i].Want.Family
		for _, ch := range []*Chain{&r.Ports[i].Cluster, &r.Ports[i].Local} {
			follow(ch, ec.jumps(ch.Rules), func(e string) Chain { return dests[ec.req(fam, e)] })
		}
	}
	return nil
}

// follow adds to ch the destinations of the endpoint chains it jumps to;
// a jump to a chain that is absent or unreadable makes ch unreadable: what
// it sends to is then not known. An endpoint chain read completely that
// holds no DNAT (its rule deleted by hand) is known: traffic sent there is
// not delivered. ch stays read, with that chain in NoDNAT, so that the
// judge reports drift, not a node it could not read.
func follow(ch *Chain, to []string, get func(string) Chain) {
	if !ch.Present || len(to) == 0 {
		return
	}
	eps := slices.Clone(ch.Endpoints)
	var noDNAT []string
	for _, e := range to {
		d := get(e)
		switch {
		case d.Unreadable != "":
			unreadable(ch, fmt.Sprintf("endpoint chain %s: %s", e, d.Unreadable))
			return
		case !d.Present:
			unreadable(ch, fmt.Sprintf("jumps to endpoint chain %s, which does not exist", e))
			return
		case len(d.Endpoints) == 0:
			noDNAT = append(noDNAT, e)
		}
		eps = append(eps, d.Endpoints...)
	}
	ch.Endpoints, ch.NoDNAT = sortedUnique(eps), sortedUnique(noDNAT)
}

func unreadable(ch *Chain, why string) {
	*ch = Chain{Name: ch.Name, Rules: ch.Rules, Unreadable: why}
}

// markJumpers makes every chain that jumps to an endpoint chain
// unreadable, when those are too many to read.
func markJumpers(r *Reading, jumps func([]string) []string, why string) {
	for i := range r.Ports {
		for _, ch := range []*Chain{&r.Ports[i].Cluster, &r.Ports[i].Local} {
			if ch.Present && len(jumps(ch.Rules)) > 0 {
				unreadable(ch, why)
			}
		}
	}
}

func nftFamily(f string) string {
	if f == "IPv6" {
		return "ip6"
	}
	return "ip"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return slices.Compact(s)
}
