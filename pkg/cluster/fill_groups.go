package cluster

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// filledGroups holds a filled cache's Pods by namespace and label set, so
// that PodsMatching matches a selector once per label set rather than once
// per Pod. A one-shot fill's stores are never written after Fill returns,
// so this is built once; an informer's store changes under every event and
// is read through its namespace index instead. On the 100,000-Pod envelope
// (2,000 Pods and 100 Services a namespace) the per-Pod matching was a
// quarter of a no-op `sync --all -A`'s CPU.
type filledGroups map[string][]labelGroup

// labelGroup is the Pods of one namespace with one label set, by name, as
// the store holds them.
type labelGroup struct {
	labels labels.Set
	pods   []*PodRecord
}

func groupFilled(objs []any) filledGroups {
	type key struct{ ns, labels string }
	index := map[key]int{}
	out := filledGroups{}
	var b strings.Builder
	records := make([]*PodRecord, 0, len(objs))
	for _, o := range objs {
		if r, ok := o.(*PodRecord); ok {
			records = append(records, r)
		}
	}
	slices.SortFunc(records, recordByName)
	for _, p := range records {
		b.Reset()
		keys := make([]string, 0, len(p.Labels))
		for k := range p.Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteString(k)
			b.WriteByte('=')
			b.WriteString(p.Labels[k])
			b.WriteByte(',') // neither ',' nor '=' occurs in a label value
		}
		k := key{p.Namespace, b.String()}
		i, ok := index[k]
		if !ok {
			i = len(out[p.Namespace])
			index[k] = i
			out[p.Namespace] = append(out[p.Namespace], labelGroup{labels: p.Labels})
		}
		g := &out[p.Namespace][i]
		g.pods = append(g.pods, p)
	}
	return out
}

// matching returns the Pods of namespace whose labels sel matches, by
// name, each built from its record for this call.
func (f filledGroups) matching(namespace string, sel labels.Selector) []*corev1.Pod {
	var records []*PodRecord
	n := 0
	for _, g := range f[namespace] {
		if sel.Matches(g.labels) {
			records = append(records, g.pods...)
			n++
		}
	}
	if n > 1 {
		slices.SortFunc(records, recordByName)
	}
	if len(records) == 0 {
		return nil
	}
	out := make([]*corev1.Pod, len(records))
	for i, r := range records {
		out[i] = r.Pod()
	}
	return out
}

func recordByName(a, b *PodRecord) int { return strings.Compare(a.Name, b.Name) }

func byName(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) }
