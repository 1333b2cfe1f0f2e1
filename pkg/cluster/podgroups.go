package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// PodGroupIndex indexes Pods by namespace, shape (AppendPodShape) and label
// set. The Pods of one workload share all three, so a namespace of 5,000
// replicas holds a handful of keys: a Service selector is matched once per
// key instead of once per Pod, and the informer keeps the index current as
// Pods come and go. The admission webhook reads it (PodGroups).
const PodGroupIndex = "podGroup"

// PodIndexers are the indexes a Pod store of the Cache carries.
func PodIndexers() cache.Indexers {
	return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, PodGroupIndex: podGroup}
}

// The key is namespace NUL shape NUL k=v,k=v (labels sorted). Neither NUL
// nor ',' nor '=' can occur in a namespace, a label key or a label value
// (the API server validates them), nor NUL in a shape.
func podGroup(obj any) ([]string, error) {
	r, ok := obj.(*PodRecord)
	if !ok {
		return nil, nil
	}
	return []string{r.groupKey()}, nil
}

// PodGroupKey is the PodGroupIndex key of a Pod.
func PodGroupKey(p *corev1.Pod) string {
	b := append([]byte(p.Namespace), 0)
	b = AppendPodShape(b, p)
	b = append(b, 0)
	keys := make([]string, 0, len(p.Labels))
	for k := range p.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, p.Labels[k]...)
	}
	return string(b)
}

// PodGroup is the Pods of one PodGroupIndex key: alike in namespace, shape
// and labels.
type PodGroup struct {
	// Shape is AppendPodShape of every member.
	Shape string
	// First is the first member by name.
	First *corev1.Pod
	// Names are the members' names, unsorted; shared, not to be modified.
	Names []string
}

// PodGroups returns the groups of namespace's Pods whose labels the
// selector (a plain label set, as a Service's) matches; every group of the
// namespace when selector is nil. With TrackPodGroups the cost grows with
// the number of the namespace's groups, not of Pods; without, each group's
// Pods are read, and every group key of the store is listed. The Pod store
// must carry PodIndexers.
func (c *Cache) PodGroups(namespace string, selector map[string]string) ([]PodGroup, error) {
	pods, memo := c.Pods, c.podGroups
	// A store without the index would list no groups, which reads as "no
	// Pods": say so instead.
	if pods.GetIndexers()[PodGroupIndex] == nil {
		return nil, fmt.Errorf("the Pod store has no %s index", PodGroupIndex)
	}
	prefix := namespace + "\x00"
	// With the memo, the namespace's own keys; without, every key of the
	// index (the whole cluster's), filtered by the prefix.
	var keys []string
	if memo != nil {
		keys = memo.keysIn(namespace)
	} else {
		keys = pods.ListIndexFuncValues(PodGroupIndex)
	}
	var out []PodGroup
	for _, key := range keys {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		i := strings.IndexByte(rest, 0)
		if i < 0 || (selector != nil && !labelsMatch(selector, rest[i+1:])) {
			continue
		}
		var g PodGroup
		var found bool
		var err error
		if memo != nil {
			g, found, err = memo.group(pods, key, rest[:i])
		} else {
			g, found, err = readGroup(pods, key, rest[:i])
		}
		if err != nil {
			return nil, err
		}
		if found {
			out = append(out, g)
		}
	}
	return out, nil
}

// readGroup reads the group of key from the store. ByIndex rather than
// IndexKeys, which sorts the keys: on 5,000 Pods that sort was most of an
// admission's time.
func readGroup(pods cache.Indexer, key, shape string) (PodGroup, bool, error) {
	objs, err := pods.ByIndex(PodGroupIndex, key)
	if err != nil || len(objs) == 0 {
		return PodGroup{}, false, err
	}
	g := PodGroup{Shape: shape, Names: make([]string, 0, len(objs))}
	var first *PodRecord
	for _, o := range objs {
		r := o.(*PodRecord)
		if first == nil || r.Name < first.Name {
			first = r
		}
		g.Names = append(g.Names, r.Name)
	}
	g.First = first.Pod()
	return g, true, nil
}

// labelsMatch tells whether the encoded label set (k=v,k=v) has every
// pair of selector.
func labelsMatch(selector map[string]string, encoded string) bool {
	found := 0
	for encoded != "" {
		var pair string
		pair, encoded, _ = strings.Cut(encoded, ",")
		k, v, _ := strings.Cut(pair, "=")
		if want, ok := selector[k]; ok {
			if want != v {
				return false
			}
			found++
		}
	}
	return found == len(selector)
}

// AppendPodShape appends what decides the webhook's findings about a Pod:
// whether the planner can include it at all (terminal phase, an IP), the
// address families of its IPs, the ports it declares (named target ports
// resolve against them) and its controller (owners are told apart). Pods
// of one shape are judged alike by the planner.
func AppendPodShape(b []byte, p *corev1.Pod) []byte {
	for i := range p.OwnerReferences {
		if ref := &p.OwnerReferences[i]; ref.Controller != nil && *ref.Controller {
			b = append(b, ref.Kind...)
			b = append(b, '/')
			b = append(b, ref.Name...)
			break
		}
	}
	b = append(b, '|')
	b = append(b, p.Status.Phase...)
	b = append(b, '|')
	if p.Status.PodIP != "" {
		b = append(b, 'i')
	}
	// The planner reads status.podIPs for addresses; a colon tells the
	// families apart (an IPv4-mapped IPv6 address, which the planner counts
	// as IPv4, only splits a group needlessly).
	for _, ip := range p.Status.PodIPs {
		if strings.Contains(ip.IP, ":") {
			b = append(b, '6')
		} else {
			b = append(b, '4')
		}
	}
	b = append(b, '|')
	b = appendPorts(b, p.Spec.Containers, false)
	return appendPorts(b, p.Spec.InitContainers, true)
}

func appendPorts(b []byte, cs []corev1.Container, init bool) []byte {
	for _, c := range cs {
		if init {
			if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				b = append(b, "s:"...)
			} else {
				b = append(b, "x:"...)
			}
		}
		for _, cp := range c.Ports {
			b = append(b, cp.Name...)
			b = append(b, '=')
			b = strconv.AppendInt(b, int64(cp.ContainerPort), 10)
			b = append(b, cp.Protocol...)
			b = append(b, ',')
		}
		b = append(b, ';')
	}
	return b
}
