package proxyread

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// wholeSaves answers requests "CMD TABLE CHAIN" from `CMD-save -t TABLE`,
// saved once per command and table in one exec (the first call's; a later
// call's requests are answered from the saves already made), split into
// one listing a chain as `CMD -S CHAIN` prints it, so that the targeted
// parsers read them.
func wholeSaves(exec Exec, lim Limits, r *Reading) answers {
	saves := map[string]map[string]answer{} // "CMD TABLE" -> chain -> listing
	broken := map[string]string{}
	return func(ctx context.Context, reqs []string) (func(string) answer, error) {
		var need []string
		for _, q := range reqs {
			ct := saveKey(q)
			if _, ok := saves[ct]; !ok && broken[ct] == "" && !contains(need, ct) {
				need = append(need, ct)
			}
		}
		sq := make([]string, len(need))
		for i, ct := range need {
			cmd, table, _ := strings.Cut(ct, " ")
			sq[i] = cmd + "-save " + table
		}
		ans, err := round(ctx, exec, IptablesScript, sq, lim, r)
		if err != nil {
			return nil, err
		}
		for i, ct := range need {
			cmd, table, _ := strings.Cut(ct, " ")
			if chains, err := splitSave(ans[i], cmd, table); err != nil {
				broken[ct] = err.Error()
			} else {
				saves[ct] = chains
			}
		}
		return func(q string) answer {
			ct := saveKey(q)
			if why := broken[ct]; why != "" {
				return answer{rc: -1, missing: why}
			}
			if a, ok := saves[ct][strings.TrimPrefix(q, ct+" ")]; ok {
				return a
			}
			return iptNotFound
		}, nil
	}
}

// saveKey is the "CMD TABLE" of a request "CMD TABLE CHAIN".
func saveKey(q string) string {
	f := strings.Fields(q)
	if len(f) < 2 {
		return q
	}
	return f[0] + " " + f[1]
}

// iptNotFound is what `iptables -S` answers for a chain that is not there.
var iptNotFound = answer{rc: 1, out: []string{"iptables: No chain/target/match by that name."}}

// splitSave splits an iptables-save of one table into chain -> the
// listing `-S CHAIN` would print: "-N CHAIN" and its rules. The save must
// be whole: its "*TABLE" line, chain declarations (":CHAIN POLICY
// [P:B]"), rules of declared chains, "COMMIT", comments around; a chain
// declared with no rules is present and empty, a chain not declared is
// absent. Anything else (cut before COMMIT, another table, a chain
// declared twice) makes the whole save unreadable. Rules are split by
// chain only; the chains asked for are parsed by iptRules, as listed.
func splitSave(a answer, cmd, table string) (map[string]answer, error) {
	what := cmd + "-save -t " + table
	// A table always exists: any failure is an error.
	if _, why := a.failed(nil); why != "" {
		return nil, fmt.Errorf("%s: %s", what, why)
	}
	const before, in, done = 0, 1, 2
	state := before
	chains := map[string]answer{}
	for _, l := range a.out {
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
			continue
		case state == before && l == "*"+table:
			state = in
		case state == in && l == "COMMIT":
			state = done
		case state == in && strings.HasPrefix(l, ":"):
			f := strings.Fields(l[1:])
			if len(f) != 3 || !strings.HasPrefix(l, ":"+f[0]+" ") {
				return nil, fmt.Errorf("%s: a chain declaration not understood: %s", what, english.Clip(l, clipLen))
			}
			if _, dup := chains[f[0]]; dup {
				return nil, fmt.Errorf("%s: chain %s declared twice", what, english.Clip(f[0], clipLen))
			}
			chains[f[0]] = answer{out: []string{"-N " + f[0]}}
		case state == in && strings.HasPrefix(l, "-A "):
			name, _, _ := strings.Cut(l[len("-A "):], " ")
			c, ok := chains[name]
			if !ok {
				return nil, fmt.Errorf("%s: a rule of chain %s, not declared: %s", what, english.Clip(name, clipLen), english.Clip(l, clipLen))
			}
			c.out = append(c.out, l)
			chains[name] = c
		default:
			return nil, fmt.Errorf("%s: not a save of table %s: %s", what, table, english.Clip(l, clipLen))
		}
	}
	if state != done {
		return nil, fmt.Errorf("%s: the save of table %s is not whole (no *%s ... COMMIT)", what, table, table)
	}
	return chains, nil
}
