package dnsexpect

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Defaults of the plugins, where a Corefile leaves them out
// (kubernetes/setup.go defaultTTL; cache.go maxTTL and maxNTTL).
const (
	pluginDefaultTTL = 5 * time.Second
	cacheMaxTTL      = 3600 * time.Second
	cacheMaxNTTL     = 1800 * time.Second
	defaultSlack     = 5 * time.Second
)

// directive is one line of a server block: its name, arguments, and the
// lines of its own block.
type directive struct {
	name  string
	args  []string
	block [][]string
}

// serverBlock is a Corefile server block: its keys and directives.
type serverBlock struct {
	keys []string
	dirs []directive
}

// CorefileTiming reads, from a Corefile (the kube-system/coredns
// ConfigMap's), the kubernetes plugin's ttl and how long the cache plugin
// may keep answers for domain, in the server block that serves domain.
// Slack is 5s. It reads what a kubeadm-like Corefile says and no more
// (no import, no env substitution); an error says what it could not find.
func CorefileTiming(corefile, domain string) (Timing, error) {
	if domain == "" {
		domain = DefaultDomain
	}
	domain = fqdn(domain)
	blocks, err := parseCorefile(corefile)
	if err != nil {
		return Timing{}, err
	}
	sb := servingBlock(blocks, domain)
	if sb == nil {
		return Timing{}, fmt.Errorf("no server block of the Corefile serves %s", domain)
	}
	t := Timing{Slack: defaultSlack}
	found := false
	for _, d := range sb.dirs {
		switch d.name {
		case "kubernetes":
			if !servesZone(d.args, sb.keys, domain) {
				continue
			}
			found = true
			t.PluginTTL = pluginDefaultTTL
			for _, l := range d.block {
				if l[0] == "ttl" && len(l) == 2 {
					n, err := strconv.Atoi(l[1])
					if err != nil || n < 0 {
						return Timing{}, fmt.Errorf("kubernetes: ttl %q is no number of seconds", l[1])
					}
					t.PluginTTL = time.Duration(n) * time.Second
				}
			}
		case "cache":
			ttl, err := cacheHold(d, sb.keys, domain)
			if err != nil {
				return Timing{}, err
			}
			t.CacheTTL = ttl
		}
	}
	if !found {
		return Timing{}, fmt.Errorf("the server block for %s has no kubernetes plugin serving it", domain)
	}
	return t, nil
}

// cacheHold is the longest the cache directive d keeps a success or a
// denial for domain (cache/setup.go cacheParse): `cache [TTL] [ZONES]`
// sets both caps, `success CAP TTL` and `denial CAP TTL` each, and
// `disable success|denial [ZONES]` turns either off for those zones.
func cacheHold(d directive, keys []string, domain string) (time.Duration, error) {
	pttl, nttl := cacheMaxTTL, cacheMaxNTTL
	args := d.args
	if len(args) > 0 {
		if n, err := strconv.Atoi(args[0]); err == nil {
			if n <= 0 {
				return 0, fmt.Errorf("cache: TTL %d is not positive", n)
			}
			pttl, nttl = time.Duration(n)*time.Second, time.Duration(n)*time.Second
			args = args[1:]
		}
	}
	if !servesZone(args, keys, domain) {
		return 0, nil
	}
	for _, l := range d.block {
		switch {
		case (l[0] == "success" || l[0] == "denial") && len(l) >= 3:
			n, err := strconv.Atoi(l[2])
			if err != nil || n <= 0 {
				return 0, fmt.Errorf("cache: %s TTL %q is not a positive number", l[0], l[2])
			}
			if l[0] == "success" {
				pttl = time.Duration(n) * time.Second
			} else {
				nttl = time.Duration(n) * time.Second
			}
		case l[0] == "disable" && len(l) >= 2 && servesZone(l[2:], []string{"."}, "svc."+domain):
			// No zones means the root; the names asked lie under svc.<domain>.
			if l[1] == "success" {
				pttl = 0
			} else if l[1] == "denial" {
				nttl = 0
			}
		}
	}
	return max(pttl, nttl), nil
}

// servesZone: domain lies in one of zones, or, with none given, in one of
// the server block's keys (plugin.OriginsFromArgsOrServerBlock).
func servesZone(zones, keys []string, domain string) bool {
	if len(zones) == 0 {
		zones = keys
	}
	for _, z := range zones {
		if zoneContains(keyZone(z), domain) {
			return true
		}
	}
	return false
}

// keyZone is the zone of a server block key or a zone argument:
// "dns://.:53" → ".", "cluster.local:53" → "cluster.local.".
func keyZone(k string) string {
	if i := strings.Index(k, "://"); i >= 0 {
		k = k[i+3:]
	}
	if i := strings.LastIndex(k, ":"); i >= 0 {
		k = k[:i]
	}
	return fqdn(k)
}

func zoneContains(zone, name string) bool {
	return zone == "." || name == zone || strings.HasSuffix(name, "."+zone)
}

// servingBlock is the block with the longest key zone containing domain,
// as CoreDNS picks the most specific zone.
func servingBlock(blocks []serverBlock, domain string) *serverBlock {
	var best *serverBlock
	bestLen := -1
	for i := range blocks {
		for _, k := range blocks[i].keys {
			z := keyZone(k)
			if zoneContains(z, domain) && len(z) > bestLen {
				best, bestLen = &blocks[i], len(z)
			}
		}
	}
	return best
}

// parseCorefile splits a Corefile into server blocks of directive lines.
func parseCorefile(s string) ([]serverBlock, error) {
	lines := corefileLines(s)
	var blocks []serverBlock
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l[len(l)-1] != "{" {
			return nil, fmt.Errorf("corefile: %q opens no server block", strings.Join(l, " "))
		}
		sb := serverBlock{keys: l[:len(l)-1]}
		for i++; i < len(lines) && lines[i][0] != "}"; i++ {
			d := lines[i]
			dir := directive{name: d[0], args: d[1:]}
			if d[len(d)-1] == "{" {
				dir.args = d[1 : len(d)-1]
				for i++; i < len(lines) && lines[i][0] != "}"; i++ {
					dir.block = append(dir.block, lines[i])
				}
				if i == len(lines) {
					return nil, fmt.Errorf("corefile: the block of %s is not closed", d[0])
				}
			}
			sb.dirs = append(sb.dirs, dir)
		}
		if i == len(lines) {
			return nil, fmt.Errorf("corefile: the server block %s is not closed", strings.Join(sb.keys, " "))
		}
		blocks = append(blocks, sb)
	}
	return blocks, nil
}

// corefileLines are the Corefile's lines as words, comments dropped; "{"
// ends a line ("cache 30 {") and "}" is a line of its own.
func corefileLines(s string) [][]string {
	var out [][]string
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		line = strings.ReplaceAll(strings.ReplaceAll(line, "{", " { "), "}", " } ")
		var cur []string
		for _, w := range strings.Fields(line) {
			switch w {
			case "}":
				if len(cur) > 0 {
					out = append(out, cur)
				}
				out, cur = append(out, []string{"}"}), nil
			case "{":
				out, cur = append(out, append(cur, w)), nil
			default:
				cur = append(cur, w)
			}
		}
		if len(cur) > 0 {
			out = append(out, cur)
		}
	}
	return out
}
