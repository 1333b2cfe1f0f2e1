package apply

import (
	discovery "k8s.io/api/discovery/v1"
)

// NotWrittenBy returns the slices labelled managedBy that show no trace of
// any of fieldManagers in their managedFields: slices another tool wrote
// under that value. Writing under a value such slices carry would rewrite or
// delete them, taking them over from their writer.
//
// A field manager is a name any client may pick (kubectl --field-manager),
// so this is a safety check against taking another tool's slices over by
// accident, never an authorization: a trace of ours proves nothing about who
// wrote, only its absence is telling. The result keeps the input order.
func NotWrittenBy(slices []*discovery.EndpointSlice, managedBy string, fieldManagers ...string) []*discovery.EndpointSlice {
	var out []*discovery.EndpointSlice
	for _, s := range slices {
		if s.Labels[discovery.LabelManagedBy] != managedBy || traced(s, fieldManagers) {
			continue
		}
		out = append(out, s)
	}
	return out
}

func traced(s *discovery.EndpointSlice, fieldManagers []string) bool {
	for _, e := range s.ManagedFields {
		for _, fm := range fieldManagers {
			if fm != "" && e.Manager == fm {
				return true
			}
		}
	}
	return false
}
