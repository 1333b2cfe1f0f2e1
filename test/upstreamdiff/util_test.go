package upstreamdiff

import (
	"reflect"
	"sort"
	"strings"
)

func equalObjects(a, b any) bool { return reflect.DeepEqual(a, b) }

// labelsText prints labels sorted, the manager label's value replaced by
// "<manager>" when it is the expected one.
func labelsText(labels map[string]string, managerKey, managedBy string) string {
	var out []string
	for k, v := range labels {
		if k == managerKey {
			if v != managedBy {
				v = "WRONG:" + v
			} else {
				v = "<manager>"
			}
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
