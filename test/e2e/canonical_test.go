package e2e

import (
	"fmt"
	"sort"
	"strings"

	discovery "k8s.io/api/discovery/v1"
)

// canonical describes a manager's slices as comparable text: per address
// type and port set, the number of slices, the labels other than managed-by,
// and every endpoint with every field the controller sets. Which slice holds
// which endpoint is left out: the upstream controller places them at random.
func canonical(slices []discovery.EndpointSlice) string {
	type group struct {
		n      int
		labels []string
		eps    []string
	}
	groups := map[string]*group{}
	for _, s := range slices {
		key := string(s.AddressType) + " " + portsKey(s.Ports)
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
		}
		g.n++
		var ls []string
		for k, v := range s.Labels {
			if k != discovery.LabelManagedBy {
				ls = append(ls, k+"="+v)
			}
		}
		sort.Strings(ls)
		g.labels = append(g.labels, strings.Join(ls, ","))
		for _, e := range s.Endpoints {
			g.eps = append(g.eps, endpointText(e))
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		g := groups[k]
		sort.Strings(g.eps)
		sort.Strings(g.labels)
		fmt.Fprintf(&b, "%s: %d slices, labels %v\n", k, g.n, g.labels)
		for _, e := range g.eps {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	return b.String()
}

func portsKey(ports []discovery.EndpointPort) string {
	var ps []string
	for _, p := range ports {
		ps = append(ps, fmt.Sprintf("%s/%s/%s/%s", str(p.Name), i32(p.Port), str((*string)(p.Protocol)), str(p.AppProtocol)))
	}
	sort.Strings(ps)
	return "[" + strings.Join(ps, " ") + "]"
}

func endpointText(e discovery.Endpoint) string {
	addrs := append([]string(nil), e.Addresses...)
	sort.Strings(addrs)
	ref := "nil"
	if r := e.TargetRef; r != nil {
		ref = fmt.Sprintf("%s/%s/%s/%s", r.Kind, r.Namespace, r.Name, r.UID)
	}
	hints := "nil"
	if h := e.Hints; h != nil {
		hints = fmt.Sprintf("zones=%v nodes=%v", h.ForZones, h.ForNodes)
	}
	return fmt.Sprintf("%v ready=%s serving=%s terminating=%s hostname=%s node=%s zone=%s ref=%s hints=%s",
		addrs, b(e.Conditions.Ready), b(e.Conditions.Serving), b(e.Conditions.Terminating),
		str(e.Hostname), str(e.NodeName), str(e.Zone), ref, hints)
}

func str(p *string) string {
	if p == nil {
		return "nil"
	}
	return *p
}

func b(p *bool) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func i32(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}
