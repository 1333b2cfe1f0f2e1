package judge

import (
	"fmt"
	"sort"

	discovery "k8s.io/api/discovery/v1"
)

// Live drops slices being deleted: consumers ignore them too.
func Live(slices []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, s := range slices {
		if s.DeletionTimestamp == nil {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// BoolOrUnset is a condition as drift and "behind" lines print it.
func BoolOrUnset(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

// StringOrUnset is an optional field as those lines print it.
func StringOrUnset(s *string) string {
	if s == nil {
		return "unset"
	}
	return *s
}

// PodOf is the name of the Pod an endpoint targets, "" for none.
func PodOf(ep *discovery.Endpoint) string {
	if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" {
		return ep.TargetRef.Name
	}
	return ""
}

// PortStrings writes ports as name:port/protocol, in their order.
func PortStrings(ports []discovery.EndpointPort) []string {
	out := []string{}
	for _, p := range ports {
		s := ""
		if p.Name != nil && *p.Name != "" {
			s = *p.Name + ":"
		}
		if p.Port != nil {
			s += fmt.Sprint(*p.Port)
		}
		if p.Protocol != nil {
			s += "/" + string(*p.Protocol)
		}
		out = append(out, s)
	}
	return out
}
