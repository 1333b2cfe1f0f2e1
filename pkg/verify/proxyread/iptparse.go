package proxyread

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// iptRule is one "-A CHAIN ..." line of `iptables -S`, split into words
// as iptables quotes them (a comment in double quotes, \" and \\ escaped).
type iptRule struct {
	line   string
	chain  string
	words  []string
	target string // the -j or -g target
}

// opt is the value following option name in the rule, "" when the rule
// has no such option or negates it ("! -d ...").
func (r iptRule) opt(name string) string {
	for i := 2; i+1 < len(r.words); i++ {
		if r.words[i] == name {
			if r.words[i-1] == "!" {
				return ""
			}
			return r.words[i+1]
		}
	}
	return ""
}

func iptParse(line string) (iptRule, error) {
	w, err := iptWords(line)
	if err != nil {
		return iptRule{}, err
	}
	if len(w) < 2 || w[0] != "-A" {
		return iptRule{}, fmt.Errorf("not a rule: %s", english.Clip(line, clipLen))
	}
	r := iptRule{line: line, chain: w[1], words: w}
	for i := 2; i+1 < len(w); i++ {
		if w[i] == "-j" || w[i] == "-g" {
			r.target = w[i+1]
		}
	}
	return r, nil
}

// iptWords splits a line as iptables-save quotes it.
func iptWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case quoted && c == '"':
			quoted = false
		case quoted:
			cur.WriteByte(c)
		case c == '"':
			quoted, inWord = true, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("an unterminated quote: %s", english.Clip(line, clipLen))
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// iptRules checks that a `-S CHAIN` answer is "-N CHAIN" and rules of
// CHAIN only, and parses the rules.
func iptRules(a answer, name string) ([]iptRule, error) {
	var rules []iptRule
	head := false
	for _, l := range a.out {
		switch {
		case l == "":
			continue
		case !head:
			if l != "-N "+name {
				return nil, fmt.Errorf("not a listing of chain %s: %s", name, english.Clip(l, clipLen))
			}
			head = true
			continue
		}
		r, err := iptParse(l)
		if err != nil {
			return nil, err
		}
		if r.chain != name {
			return nil, fmt.Errorf("a rule of chain %s in the listing of %s", english.Clip(r.chain, clipLen), name)
		}
		rules = append(rules, r)
	}
	if !head {
		return nil, fmt.Errorf("an empty listing of chain %s", name)
	}
	return rules, nil
}

// iptIndex is a KUBE-SERVICES listing indexed by "DEST PROTO PORT": the
// first rule matching a destination, protocol and port, as iptables takes
// the first match.
type iptIndex struct {
	first  map[string]iptRule
	absent bool
	err    string
}

func newIptIndex(a answer) iptIndex {
	switch gone, why := a.failed(noSuchChain); {
	case why != "":
		return iptIndex{err: kubeServices + ": " + why}
	case gone:
		return iptIndex{absent: true}
	}
	rules, err := iptRules(a, kubeServices)
	if err != nil {
		return iptIndex{err: err.Error()}
	}
	idx := iptIndex{first: map[string]iptRule{}}
	for _, r := range rules {
		d, p, port := iptDest(r.opt("-d")), r.opt("-p"), r.opt("--dport")
		if d == "" || p == "" || port == "" {
			continue
		}
		k := d + " " + p + " " + port
		if _, ok := idx.first[k]; !ok {
			idx.first[k] = r
		}
	}
	return idx
}

// iptDispatch fills the port's dispatch (the nat KUBE-SERVICES rule of its
// cluster IP) and no-endpoint entry (the filter KUBE-SERVICES REJECT or
// DROP of it).
func iptDispatch(p *PortState, nat, filter iptIndex) {
	dest, pp, err := iptKey(p.Want)
	if err != nil {
		p.Unreadable = err.Error()
		return
	}
	if nat.err != "" || filter.err != "" {
		p.Unreadable = strings.Trim(nat.err+"; "+filter.err, "; ")
		return
	}
	k := dest + " " + pp[0] + " " + pp[1]
	if r, ok := nat.first[k]; ok {
		p.Dispatch, p.DispatchTarget, p.DispatchEvidence = true, r.target, r.line
	}
	if r, ok := filter.first[k]; ok && (r.target == "REJECT" || r.target == "DROP") {
		p.NoEndpoints, p.NoEndpointsVerdict, p.NoEndpointsEvidence = true, strings.ToLower(r.target), r.line
	}
}

// iptDest is a -d value as "IP/bits" for a single address, "" for a
// network: iptables -S prints "IP/32", iptables-restore input may omit it.
func iptDest(d string) string {
	if !strings.Contains(d, "/") {
		d += "/128"
		if strings.Contains(d, ".") && !strings.Contains(d, ":") {
			d = strings.TrimSuffix(d, "/128") + "/32"
		}
	}
	p, err := netip.ParsePrefix(d)
	if err != nil || !p.IsSingleIP() {
		return ""
	}
	return p.String()
}
