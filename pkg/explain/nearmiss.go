package explain

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// maxNearMisses bounds the list: a few examples say enough.
const maxNearMisses = 5

// NearMisses finds Pods that match every selector label but one, the usual
// cause of "my Service has no endpoints" (app=web against app=Web, a missing
// version label), nearest first.
func NearMisses(selector map[string]string, pods []*corev1.Pod) []NearMiss {
	if len(selector) == 0 {
		return nil
	}
	keys := make([]string, 0, len(selector))
	for k := range selector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// The nearest few by (distance, name), kept in a bounded list rather
	// than by sorting every Pod: the admission webhook asks this of
	// namespaces of thousands of Pods within milliseconds.
	type scored struct {
		m NearMiss
		d int
	}
	var best []scored
	for _, p := range pods {
		var miss *NearMiss
		misses := 0
		for _, k := range keys {
			have, ok := p.Labels[k]
			if ok && have == selector[k] {
				continue
			}
			misses++
			miss = &NearMiss{Pod: p.Name, Label: k, Want: selector[k], Have: have, Missing: !ok}
		}
		// With a one-label selector every unrelated Pod misses by one label;
		// only a Pod that has the key with another value is a near miss.
		if misses != 1 || (len(keys) == 1 && miss.Missing) {
			continue
		}
		// Nearest first: a value differing only in case, then by edit
		// distance; a missing label counts as far; ties by Pod name.
		c := scored{*miss, distance(*miss)}
		i := sort.Search(len(best), func(i int) bool {
			return best[i].d > c.d || (best[i].d == c.d && best[i].m.Pod > c.m.Pod)
		})
		if i >= maxNearMisses {
			continue
		}
		best = append(best, scored{})
		copy(best[i+1:], best[i:])
		best[i] = c
		if len(best) > maxNearMisses {
			best = best[:maxNearMisses]
		}
	}
	var out []NearMiss
	for _, b := range best {
		out = append(out, b.m)
	}
	return out
}

func distance(m NearMiss) int {
	switch {
	case m.Missing:
		return 1 << 20
	case strings.EqualFold(m.Have, m.Want):
		return 0
	}
	return 1 + levenshtein(m.Have, m.Want)
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
