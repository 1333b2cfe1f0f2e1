package proxyread

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// IptablesScript answers requests "I CMD TABLE CHAIN" with
// `CMD -w 5 -t TABLE -S CHAIN`, CMD iptables or ip6tables: one chain a
// process, as `iptables -S` lists one chain or all of a table; and
// requests "I CMD-save TABLE" with `CMD-save -t TABLE` (the whole table;
// iptables-save takes no lock, so no -w). Every word comes from stdin and
// is quoted; the command reads no stdin.
const IptablesScript = `read -r n || exit 2
while read -r i cmd table chain; do
case $cmd in
iptables|ip6tables) out=$("$cmd" -w 5 -t "$table" -S "$chain" </dev/null 2>&1) ;;
iptables-save|ip6tables-save) out=$("$cmd" -t "$table" </dev/null 2>&1) ;;
*) out="bad request"; false ;;
esac
rc=$?
printf '@@%s begin %s\n%s\n@@%s end %s %s\n' "$n" "$i" "$out" "$n" "$i" "$rc"
done
`

// kubeServices is kube-proxy's dispatch chain: in the nat table, a rule a
// cluster IP and port jumping to the port's KUBE-SVC- (or, under
// internalTrafficPolicy Local, KUBE-SVL-) chain; in the filter table, the
// REJECT (no endpoints) or DROP (no local endpoint) of a port without
// endpoints. It holds a rule for every Service, so it is listed once per
// table and family, whatever the number of wanted ports: a rule cannot be
// checked by its spec (-C) without its comment, which kube-proxy writes
// and this package does not rely on.
const kubeServices = "KUBE-SERVICES"

// Iptables reads kube-proxy's iptables mode, one of two ways.
//
// Targeted (at most Targeted wanted ports): in one exec, KUBE-SERVICES of
// the nat and filter tables of each wanted family and each wanted port's
// KUBE-SVC- and KUBE-SVL- chains; in a second exec, the KUBE-SEP- chains
// those jump to, whose DNAT rules say where traffic goes.
//
// Whole tables (more ports): one exec of `iptables-save -t nat` and `-t
// filter` (ip6tables-save for IPv6) once per wanted family, split into
// chains and read as the targeted listings, the KUBE-SEP- chains
// included. iptables lists one chain in milliseconds whatever the table's
// size, but each chain costs a process: two a port for 1,000
// Services (9-15 s), one save of each table under 0.2 s.
type Iptables struct {
	Limits Limits
	// Targeted is the most wanted ports read chain by chain: 0 means
	// DefaultTargeted, a negative value none (the tables always).
	Targeted int
}

func (t Iptables) Read(ctx context.Context, exec Exec, want []Want) (Reading, error) {
	lim := t.Limits.orDefault()
	r := Reading{Mode: ModeIptables, Ports: make([]PortState, len(want))}
	ask := targeted(exec, IptablesScript, lim, &r)
	if t.whole(len(want)) {
		ask = wholeSaves(exec, lim, &r)
	}
	asked := map[string]bool{}
	var reqs []string
	add := func(req string) {
		if !asked[req] {
			asked[req] = true
			reqs = append(reqs, req)
		}
	}
	for i, w := range want {
		r.Ports[i] = PortState{Want: w}
		if _, _, err := iptKey(w); err != nil {
			r.Ports[i].Unreadable = err.Error()
			continue
		}
		cmd, c := iptCommand(w.Family), proxyexpect.IptablesChains(w.Ref)
		add(cmd + " nat " + kubeServices)
		add(cmd + " filter " + kubeServices)
		add(cmd + " nat " + c.Cluster)
		add(cmd + " nat " + c.Local)
	}
	get, err := ask(ctx, reqs)
	if err != nil {
		return r, err
	}
	idx := map[string]iptIndex{} // each KUBE-SERVICES parsed once
	index := func(req string) iptIndex {
		if _, ok := idx[req]; !ok {
			idx[req] = newIptIndex(get(req))
		}
		return idx[req]
	}
	for i, w := range want {
		p := &r.Ports[i]
		if p.Unreadable != "" {
			continue
		}
		cmd, c := iptCommand(w.Family), proxyexpect.IptablesChains(w.Ref)
		iptDispatch(p, index(cmd+" nat "+kubeServices), index(cmd+" filter "+kubeServices))
		p.Cluster = iptChain(get(cmd+" nat "+c.Cluster), c.Cluster, lim)
		p.Local = iptChain(get(cmd+" nat "+c.Local), c.Local, lim)
	}
	return r, readEndpointChains(ctx, ask, &r, iptEndpointChains, lim)
}

// iptEndpointChains: the KUBE-SEP- chains of the family's nat table, each
// listed as its service chain is.
var iptEndpointChains = endpointChains{
	jumps: iptJumps,
	req:   func(family, chain string) string { return iptCommand(family) + " nat " + chain },
	chain: func(a answer, req string, lim Limits) Chain { return iptChain(a, strings.Fields(req)[2], lim) },
}

// whole: the tables are saved whole for this many wanted ports.
func (t Iptables) whole(ports int) bool {
	most := t.Targeted
	if most == 0 {
		most = DefaultTargeted
	}
	return ports > most
}

func iptCommand(family string) string {
	if family == "IPv6" {
		return "ip6tables"
	}
	return "iptables"
}

// iptKey is the want's destination as iptables -S prints it ("IP/32" or
// "IP/128") and its protocol and port.
func iptKey(w Want) (dest string, protoPort [2]string, err error) {
	ip, err := wantIP(w)
	if err != nil {
		return "", protoPort, err
	}
	proto, port, err := wantPort(w)
	if err != nil {
		return "", protoPort, err
	}
	c := proxyexpect.IptablesChains(w.Ref)
	if !iptName(c.Cluster) || !iptName(c.Local) {
		return "", protoPort, fmt.Errorf("chain name %q is not one kube-proxy writes", english.Clip(c.Cluster, clipLen))
	}
	return fmt.Sprintf("%s/%d", ip, ip.BitLen()), [2]string{proto, port}, nil
}

var iptName = regexp.MustCompile(`^KUBE-[A-Z0-9-]{1,40}$`).MatchString

// noSuchChain: what iptables and ip6tables print for a chain that does
// not exist. iptables-nft 1.8.9 (Debian bookworm's, under the kube-proxy
// image) says "chain `X' in table `nat' is incompatible, use 'nft' tool"
// for a missing chain; a KUBE- chain that is really incompatible is none
// kube-proxy wrote (it writes through iptables-restore), so reading it as
// absent errs on the side of a chain reported missing, never present.
func noSuchChain(a answer) bool {
	for _, l := range a.out {
		if strings.Contains(l, "No chain/target/match by that name") ||
			strings.HasSuffix(l, "is incompatible, use 'nft' tool.") {
			return true
		}
	}
	return false
}

// iptChain is a chain as `-S CHAIN` lists it, with the destinations of its
// own DNAT rules.
func iptChain(a answer, name string, lim Limits) Chain {
	ch := Chain{Name: name}
	if gone, why := a.failed(noSuchChain); gone || why != "" {
		ch.Unreadable = why
		return ch
	}
	rules, err := iptRules(a, name)
	if err != nil {
		ch.Unreadable = err.Error()
		return ch
	}
	if err := iptStrict(name, rules); err != nil {
		ch.Unreadable = err.Error()
		return ch
	}
	var eps []string
	for _, r := range rules {
		if r.target != "DNAT" {
			continue
		}
		to := r.opt("--to-destination")
		ep, err := addrPort(to, ":")
		if err != nil {
			ch.Unreadable = "a DNAT rule not understood: " + english.Clip(r.line, clipLen)
			return ch
		}
		eps = append(eps, ep)
	}
	ch.Present, ch.Endpoints = true, sortedUnique(eps)
	for _, r := range rules {
		ch.Rules = append(ch.Rules, r.line)
	}
	return ch
}

// iptJumps are the KUBE-SEP- chains a service chain's rules jump to.
func iptJumps(lines []string) []string {
	var out []string
	for _, l := range lines {
		r, err := iptParse(l)
		if err == nil && strings.HasPrefix(r.target, "KUBE-SEP-") && iptName(r.target) {
			out = append(out, r.target)
		}
	}
	return sortedUnique(out)
}
