package proxyread

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// A chain is read strictly against the rules kube-proxy 1.36 writes into
// it (pkg/proxy/nftables/proxier.go writeServiceToEndpointDNATs,
// writeServiceToEndpointJumps and the endpoint chains; iptables/proxier.go
// the KUBE-SVC-, KUBE-SVL- and KUBE-SEP- chains): reading only its DNAT
// statements would let a drop, a return or a jump elsewhere placed before
// them send traffic away from the endpoints the chain seems to hold. Any
// other rule makes the chain unreadable, naming the rule.

var (
	// nftMasq: the masquerade mark, after address and port matches only (1.36
	// writes none in these chains; older ones did, in endpoint chains).
	nftMasq = regexp.MustCompile(`^(?:ip6? [sd]addr (?:!= )?[0-9a-fA-F.:/]+ |(?:tcp|udp|sctp) dport [0-9]+ )*jump mark-for-masquerade$`)
	// nftAffinityGoto: a service chain's session affinity rule.
	nftAffinityGoto = regexp.MustCompile(`^ip6? saddr @affinity-[A-Za-z0-9._/-]+ goto (endpoint-[A-Za-z0-9._/-]+)$`)
	// nftAffinityUpdate: an endpoint chain's session affinity rule.
	nftAffinityUpdate = regexp.MustCompile(`^update @affinity-[A-Za-z0-9._/-]+ \{ ip6? saddr \}$`)
	// nftL4: what precedes kube-proxy's dnat statements; nft prints the
	// protocol by number where it finds no /etc/protocols ("meta l4proto 6
	// dnat ip to ...").
	nftL4      = regexp.MustCompile(`^meta l4proto (?:tcp|udp|sctp|6|17|132) dnat `)
	nftVmap    = regexp.MustCompile(`^numgen random mod ([0-9]{1,9}) vmap \{ ?(.*?) ?\}$`)
	nftGotoEnd = regexp.MustCompile(`^goto (endpoint-[A-Za-z0-9._/-]+)$`)
)

// nftRule checks one statement of a chain: a service chain (service-,
// local-) holds its numgen dnat map, or its affinity gotos and numgen
// vmap; an endpoint chain (endpoint-) its affinity update and dnat. It
// returns the rule's DNAT destinations.
func nftRule(chain, s string) ([]string, error) {
	endpoint := strings.HasPrefix(chain, "endpoint-")
	bad := fmt.Errorf("a rule kube-proxy does not write in chain %s: %s", english.Clip(chain, clipLen), english.Clip(s, clipLen))
	switch {
	case nftMasq.MatchString(s):
		return nil, nil
	case nftL4.MatchString(s):
		eps, err := nftDNAT(s)
		if err != nil {
			return nil, err
		}
		// a service chain's dnat is the numgen map, an endpoint chain's one address
		if endpoint == strings.Contains(s, " numgen ") {
			return nil, bad
		}
		return eps, nil
	case endpoint && nftAffinityUpdate.MatchString(s):
		return nil, nil
	case !endpoint && nftAffinityGoto.MatchString(s):
		return nil, nil
	case !endpoint && nftVmap.MatchString(s):
		if _, err := numgenElems(nftVmap.FindStringSubmatch(s), func(v string) (string, error) {
			if !nftGotoEnd.MatchString(v) {
				return "", fmt.Errorf("not a goto to an endpoint chain")
			}
			return v, nil
		}); err != nil {
			return nil, fmt.Errorf("a numgen vmap not understood in chain %s: %s", english.Clip(chain, clipLen), english.Clip(s, clipLen))
		}
		return nil, nil
	}
	return nil, bad
}

// numgenElems parses the elements m[2] of a numgen map of modulus m[1]:
// every index below N exactly once, each value read by val.
func numgenElems(m []string, val func(string) (string, error)) ([]string, error) {
	bad := fmt.Errorf("not indexes 0 to N-1")
	if m == nil {
		return nil, bad
	}
	n, _ := strconv.Atoi(m[1])
	elems := strings.Split(m[2], ",")
	if n < 1 || len(elems) != n {
		return nil, bad
	}
	seen := make([]bool, n)
	out := make([]string, 0, n)
	for _, e := range elems {
		idx, v, ok := strings.Cut(strings.TrimSpace(e), " : ")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 0 || i >= n || seen[i] {
			return nil, bad
		}
		seen[i] = true
		got, err := val(v)
		if err != nil {
			return nil, bad
		}
		out = append(out, got)
	}
	return out, nil
}

// iptStrict checks a chain's rules: a KUBE-SEP- chain's targets are
// KUBE-MARK-MASQ (hairpin) and one DNAT; a KUBE-SVC- or KUBE-SVL- chain's
// KUBE-MARK-MASQ and KUBE-SEP- chains, its last jump to one
// unconditional (kube-proxy's last endpoint has no statistic match), so
// that no traffic falls through the chain.
func iptStrict(name string, rules []iptRule) error {
	endpoint := strings.HasPrefix(name, "KUBE-SEP-")
	dnats, seps := 0, 0
	var last iptRule
	for _, r := range rules {
		switch {
		case r.target == "KUBE-MARK-MASQ":
		case endpoint && r.target == "DNAT" && dnats == 0:
			dnats++
		case !endpoint && strings.HasPrefix(r.target, "KUBE-SEP-") && iptName(r.target):
			seps, last = seps+1, r
		default:
			return fmt.Errorf("a rule kube-proxy does not write in chain %s: %s", english.Clip(name, clipLen), english.Clip(r.line, clipLen))
		}
	}
	if endpoint || seps == 0 {
		return nil
	}
	if !iptUnconditional(last) {
		return fmt.Errorf("chain %s has no unconditional last jump to an endpoint chain: %s", english.Clip(name, clipLen), english.Clip(last.line, clipLen))
	}
	return nil
}

// iptUnconditional: "-A CHAIN [-m comment --comment C] -j TARGET".
func iptUnconditional(r iptRule) bool {
	w := r.words[2:]
	if len(w) >= 3 && w[0] == "-m" && w[1] == "comment" && w[2] == "--comment" {
		w = w[min(4, len(w)):]
	}
	return len(w) == 2 && w[0] == "-j"
}
