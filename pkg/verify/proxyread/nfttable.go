package proxyread

import (
	"context"
	"fmt"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

// wholeTables answers requests from `nft list table FAMILY kube-proxy`,
// listed once per family in one exec, split into one listing an object so
// that the targeted parsers read them.
func wholeTables(exec Exec, lim Limits, r *Reading) answers {
	tables := map[string]tableIndex{}
	broken := map[string]string{}
	return func(ctx context.Context, reqs []string) (func(string) answer, error) {
		var fams []string
		for _, q := range reqs {
			f, _, _ := strings.Cut(q, " ")
			if _, ok := tables[f]; !ok && broken[f] == "" && !contains(fams, f) {
				fams = append(fams, f)
			}
		}
		tq := make([]string, len(fams))
		for i, f := range fams {
			tq[i] = f + " table " + proxyexpect.NftablesTable
		}
		ans, err := round(ctx, exec, NftablesScript, tq, lim, r)
		if err != nil {
			return nil, err
		}
		for i, f := range fams {
			if objs, err := splitTable(ans[i], f); err != nil {
				broken[f] = err.Error()
			} else {
				tables[f] = indexTable(objs, f)
			}
		}
		return func(q string) answer {
			f, _, _ := strings.Cut(q, " ")
			if why := broken[f]; why != "" {
				return answer{rc: -1, missing: why}
			}
			return lookup(tables[f], q)
		}, nil
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

var notFound = answer{rc: 1, out: []string{"Error: No such file or directory"}}

// splitTable splits a table listing into "KIND NAME" -> the listing `nft
// list KIND` would print of that object alone. A missing table holds
// nothing.
func splitTable(a answer, fam string) (map[string]answer, error) {
	switch gone, why := a.failed(noSuch); {
	case why != "":
		return nil, fmt.Errorf("table %s %s: %s", fam, proxyexpect.NftablesTable, why)
	case gone:
		return map[string]answer{}, nil
	}
	head := "table " + fam + " " + proxyexpect.NftablesTable + " {"
	var lines []string
	for _, l := range a.out {
		if t := strings.Join(strings.Fields(l), " "); t != "" {
			lines = append(lines, t)
		}
	}
	n := len(lines)
	if n < 2 || lines[0] != head || lines[n-1] != "}" {
		return nil, fmt.Errorf("not a listing of table %s %s", fam, proxyexpect.NftablesTable)
	}
	objs := map[string]answer{}
	var cur []string
	depth := 0
	for _, l := range lines[1 : n-1] {
		if depth == 0 {
			cur = []string{head}
		}
		cur = append(cur, l)
		depth += strings.Count(l, "{") - strings.Count(l, "}")
		if depth < 0 {
			return nil, fmt.Errorf("unbalanced braces in table %s %s", fam, proxyexpect.NftablesTable)
		}
		if depth > 0 {
			continue
		}
		f := strings.Fields(cur[1])
		if len(f) != 3 || f[2] != "{" {
			continue // a table's own statement (its comment, flags)
		}
		key := f[0] + " " + f[1]
		if _, dup := objs[key]; dup {
			return nil, fmt.Errorf("%s listed twice in table %s %s", english.Clip(key, clipLen), fam, proxyexpect.NftablesTable)
		}
		objs[key] = answer{out: append(cur, "}")}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced braces in table %s %s", fam, proxyexpect.NftablesTable)
	}
	return objs, nil
}

// tableIndex is a split table and its maps' elements by "MAP KEY", each
// as `nft get element` prints it; "MAP" alone holds why a map is
// unreadable.
type tableIndex struct {
	objs  map[string]answer
	elems map[string]answer
}

func indexTable(objs map[string]answer, fam string) tableIndex {
	idx := tableIndex{objs: objs, elems: map[string]answer{}}
	for obj, m := range objs {
		kind, name, _ := strings.Cut(obj, " ")
		if kind != "map" {
			continue
		}
		stmts, err := nftBody(m, fam, "map", name)
		if err != nil {
			idx.elems[name] = answer{rc: -1, missing: err.Error()}
			continue
		}
		for _, s := range stmts {
			inner, ok := strings.CutPrefix(s, "elements = { ")
			if !ok {
				continue
			}
			for _, e := range strings.Split(strings.TrimSuffix(inner, " }"), ",") {
				e = strings.TrimSpace(e)
				k := name + " " + elementKey(e)
				if _, dup := idx.elems[k]; dup {
					idx.elems[k] = answer{rc: -1, missing: "an element listed twice in map " + english.Clip(name, clipLen)}
					continue
				}
				idx.elems[k] = answer{out: []string{m.out[0], m.out[1], "elements = { " + e + " }", "}", "}"}}
			}
		}
	}
	return idx
}

// elementKey is an element's key: what precedes its comment and verdict.
func elementKey(e string) string {
	k, _, _ := strings.Cut(e, " : ")
	k, _, _ = strings.Cut(k, " comment ")
	return canonKey(k)
}

// lookup answers one request from a split table: a chain's own listing,
// or an element as `nft get element` prints it.
func lookup(idx tableIndex, q string) answer {
	f := strings.SplitN(q, " ", 4)
	switch {
	case len(f) == 3 && f[1] == "chain":
		if a, ok := idx.objs["chain "+f[2]]; ok {
			return a
		}
		return notFound
	case len(f) == 4 && f[1] == "element":
		if a, ok := idx.elems[f[2]]; ok {
			return a
		}
		if a, ok := idx.elems[f[2]+" "+f[3]]; ok {
			return a
		}
		return notFound
	}
	return answer{rc: -1, missing: "a request not understood"}
}
