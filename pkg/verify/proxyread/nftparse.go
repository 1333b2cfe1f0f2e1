package proxyread

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// The nft listings are parsed here rather than by sigs.k8s.io/knftables:
// its ListRules returns a chain's rule handles and comments but not the
// rules, its ListElements lists a whole map (the dump this package avoids),
// and its parser of `nft --json` output is not exported. The formats are
// what kube-proxy 1.36 writes (pkg/proxy/nftables/proxier.go) as nft lists
// it back; anything else in a place that matters is unreadable.

// nftKey is the want's service-ips / no-endpoint-services key,
// "IP . protocol . port", and its table family, "ip" or "ip6".
func nftKey(w Want) (fam, key string, err error) {
	ip, err := wantIP(w)
	if err != nil {
		return "", "", err
	}
	proto, port, err := wantPort(w)
	if err != nil {
		return "", "", err
	}
	for _, n := range []string{proxyexpect.NftablesChains(w.Ref).Cluster, proxyexpect.NftablesChains(w.Ref).Local} {
		if !validName(n) {
			return "", "", fmt.Errorf("chain name %q is not one kube-proxy writes", english.Clip(n, clipLen))
		}
	}
	return nftFamily(w.Family), ip.String() + " . " + proto + " . " + port, nil
}

func wantIP(w Want) (netip.Addr, error) {
	ip, err := netip.ParseAddr(w.ClusterIP)
	switch {
	case err != nil:
		return ip, fmt.Errorf("cluster IP %q is no IP address", english.Clip(w.ClusterIP, clipLen))
	case w.Family == "IPv4" && !ip.Is4(), w.Family == "IPv6" && (!ip.Is6() || ip.Is4In6()):
		return ip, fmt.Errorf("cluster IP %s is not of family %s", ip, w.Family)
	case w.Family != "IPv4" && w.Family != "IPv6":
		return ip, fmt.Errorf("unknown IP family %q", english.Clip(w.Family, clipLen))
	}
	return ip, nil
}

func wantPort(w Want) (proto, port string, err error) {
	proto = strings.ToLower(string(w.Port.Protocol))
	if proto != "tcp" && proto != "udp" && proto != "sctp" {
		return "", "", fmt.Errorf("protocol %q is none kube-proxy serves", english.Clip(proto, clipLen))
	}
	if w.Port.Port < 1 || w.Port.Port > 65535 {
		return "", "", fmt.Errorf("port %d is out of range", w.Port.Port)
	}
	return proto, strconv.Itoa(int(w.Port.Port)), nil
}

// validName: a chain name that can travel as one word of the script's
// input. kube-proxy's names are made of DNS labels, a hash, and "-", "/",
// "_", "." and ":"-free IPs.
var validName = regexp.MustCompile(`^[A-Za-z0-9._/-]{1,256}$`).MatchString

// noSuch: the error nft prints for a chain, map, element or table that
// does not exist.
func noSuch(a answer) bool {
	for _, l := range a.out {
		if strings.HasPrefix(l, "Error: No such file or directory") ||
			strings.HasPrefix(l, "Error: Could not process rule: No such file or directory") {
			return true
		}
	}
	return false
}

// nftBody checks that a listing is "table FAM kube-proxy { KIND NAME {
// ... } }" and returns its inner statements, a statement continued over
// lines while its braces are open.
func nftBody(a answer, fam, kind, name string) ([]string, error) {
	var lines []string
	for _, l := range a.out {
		if t := strings.Join(strings.Fields(l), " "); t != "" {
			lines = append(lines, t)
		}
	}
	n := len(lines)
	if n < 4 || lines[0] != "table "+fam+" "+proxyexpect.NftablesTable+" {" || lines[1] != kind+" "+name+" {" ||
		lines[n-2] != "}" || lines[n-1] != "}" {
		return nil, fmt.Errorf("not a listing of %s %s", kind, english.Clip(name, clipLen))
	}
	var stmts, cur []string
	depth := 0
	for _, l := range lines[2 : n-2] {
		cur = append(cur, l)
		depth += strings.Count(l, "{") - strings.Count(l, "}")
		if depth < 0 {
			return nil, fmt.Errorf("unbalanced braces in %s %s", kind, english.Clip(name, clipLen))
		}
		if depth == 0 {
			stmts, cur = append(stmts, strings.Join(cur, " ")), nil
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced braces in %s %s", kind, english.Clip(name, clipLen))
	}
	return stmts, nil
}

// nftChain is a chain as its listing shows it, with the destinations of
// its own DNAT rules.
func nftChain(a answer, fam, name string, lim Limits) Chain {
	ch := Chain{Name: name}
	if gone, why := a.failed(noSuch); gone || why != "" {
		ch.Unreadable = why
		return ch
	}
	stmts, err := nftBody(a, fam, "chain", name)
	if err != nil {
		ch.Unreadable = err.Error()
		return ch
	}
	var eps []string
	for _, s := range stmts {
		if strings.HasPrefix(s, "comment ") {
			continue
		}
		got, err := nftRule(name, s)
		if err != nil {
			ch.Unreadable = err.Error()
			return ch
		}
		eps = append(eps, got...)
	}
	ch.Present, ch.Rules, ch.Endpoints = true, stmts, sortedUnique(eps)
	return ch
}

// nftDNAT returns the destinations of a rule's dnat statement: "dnat to
// ADDR:PORT" (an endpoint chain's) or "dnat ip to numgen random mod N map
// { 0 : ADDR . PORT, ... }" (a service chain's without session affinity;
// nft lists kube-proxy's "ip addr . port to" as "ip to").
func nftDNAT(rule string) ([]string, error) {
	f := strings.Fields(rule)
	at := slices.Index(f, "dnat")
	if at < 0 {
		return nil, nil
	}
	rest := f[at+1:]
	if len(rest) > 0 && (rest[0] == "ip" || rest[0] == "ip6") {
		rest = rest[1:]
	}
	if len(rest) > 3 && rest[0] == "addr" && rest[1] == "." && rest[2] == "port" {
		rest = rest[3:]
	}
	if len(rest) < 2 || rest[0] != "to" {
		return nil, fmt.Errorf("a dnat rule not understood: %s", english.Clip(rule, clipLen))
	}
	if rest[1] != "numgen" {
		ep, err := addrPort(rest[1], ":")
		if err != nil || len(rest) != 2 {
			return nil, fmt.Errorf("a dnat rule not understood: %s", english.Clip(rule, clipLen))
		}
		return []string{ep}, nil
	}
	return numgenMap(rule)
}

var numgenRE = regexp.MustCompile(`\bto numgen random mod ([0-9]{1,9}) map \{ ?(.*?) ?\}$`)

// numgenMap parses "numgen random mod N map { 0 : A . P, ..., N-1 : A . P }":
// every index below N exactly once.
func numgenMap(rule string) ([]string, error) {
	eps, err := numgenElems(numgenRE.FindStringSubmatch(rule), func(v string) (string, error) { return addrPort(v, " . ") })
	if err != nil {
		return nil, fmt.Errorf("a dnat map not understood: %s", english.Clip(rule, clipLen))
	}
	return eps, nil
}

// addrPort parses "ADDR<sep>PORT" ("[ADDR]:PORT" for IPv6 with sep ":")
// into "IP:port" as proxyexpect.Endpoint.String writes it.
func addrPort(s, sep string) (string, error) {
	if sep == ":" {
		ap, err := netip.ParseAddrPort(s)
		if err != nil || ap.Port() == 0 {
			return "", fmt.Errorf("bad address %q", english.Clip(s, clipLen))
		}
		return ap.String(), nil
	}
	a, p, ok := strings.Cut(s, sep)
	ip, err := netip.ParseAddr(a)
	port, perr := strconv.ParseUint(p, 10, 16)
	if !ok || err != nil || perr != nil || port == 0 || ip.Zone() != "" {
		return "", fmt.Errorf("bad address %q", english.Clip(s, clipLen))
	}
	return netip.AddrPortFrom(ip, uint16(port)).String(), nil
}

// nftJumps are the endpoint- chains a service chain's rules go to.
func nftJumps(rules []string) []string {
	var out []string
	for _, r := range rules {
		f := strings.Fields(r)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "goto" && f[i] != "jump" {
				continue
			}
			if name := strings.TrimRight(f[i+1], ",}"); strings.HasPrefix(name, "endpoint-") && validName(name) {
				out = append(out, name)
			}
		}
	}
	return sortedUnique(out)
}

var elementRE = regexp.MustCompile(`^elements = \{ (.+?)(?: comment "[^"]*")? : ([^:,{}"]+) \}$`)

// nftProtocols are the names of the protocols nft prints by number in a
// concatenated key where it finds no /etc/protocols (an image without
// netbase: "10.96.0.1 . 6 . 80" for the inet_proto of kube-proxy's
// service-ips map, whatever it was given).
var nftProtocols = map[string]string{"6": "tcp", "17": "udp", "132": "sctp"}

// canonKey is an element's key "IP . PROTO . PORT" with its protocol by
// name, as nftKey writes it.
func canonKey(k string) string {
	f := strings.Split(k, " . ")
	if len(f) == 3 {
		if name, ok := nftProtocols[f[1]]; ok {
			f[1] = name
		}
	}
	return strings.Join(f, " . ")
}

// nftElement reads a `get element` answer: whether the map holds key, and
// its verdict.
func nftElement(a answer, fam, set, key string) (present bool, verdict, evidence string, err error) {
	switch gone, why := a.failed(noSuch); {
	case why != "":
		return false, "", "", fmt.Errorf("%s: %s", set, why)
	case gone:
		return false, "", "", nil
	}
	stmts, err := nftBody(a, fam, "map", set)
	if err != nil {
		return false, "", "", err
	}
	for _, s := range stmts {
		if !strings.HasPrefix(s, "elements ") {
			continue
		}
		m := elementRE.FindStringSubmatch(s)
		if m == nil || canonKey(m[1]) != key {
			return false, "", "", fmt.Errorf("%s: an element other than %s: %s", set, key, english.Clip(s, clipLen))
		}
		return true, m[2], s, nil
	}
	return false, "", "", fmt.Errorf("%s: a listing without its element", set)
}

// nftDispatch fills the port's dispatch (its service-ips element) and
// no-endpoint entry (its no-endpoint-services element).
func nftDispatch(p *PortState, dispatch, noEP answer, fam, key string) {
	ok, verdict, ev, err := nftElement(dispatch, fam, proxyexpect.NftablesServiceIPsMap, key)
	ok2, verdict2, ev2, err2 := nftElement(noEP, fam, proxyexpect.NftablesNoEndpointServices, key)
	if err != nil || err2 != nil {
		p.Unreadable = joinErr(err, err2)
		return
	}
	if ok {
		p.Dispatch, p.DispatchEvidence = true, ev
		p.DispatchTarget = strings.TrimPrefix(strings.TrimPrefix(verdict, "goto "), "jump ")
	}
	if ok2 {
		p.NoEndpoints, p.NoEndpointsEvidence = true, ev2
		p.NoEndpointsVerdict = verdict2
		if verdict2 == "goto reject-chain" {
			p.NoEndpointsVerdict = "reject"
		}
	}
}

func joinErr(a, b error) string {
	switch {
	case a == nil:
		return b.Error()
	case b == nil:
		return a.Error()
	}
	return a.Error() + "; " + b.Error()
}
