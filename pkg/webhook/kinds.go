package webhook

import (
	"fmt"
	"slices"
	"strings"
)

// kindLines describe the findings, for help and errors.
var kindLines = map[Kind]string{
	NoPods:        "the selector matches no Pods (naming the near misses)",
	PortNotFound:  "a named targetPort that N of M selected Pods do not declare (naming them)",
	MixedOwners:   "selected Pods of several owners declare different ports",
	AddressFamily: "selected Pods have no address of a family the Service serves",
	NoEndpoints:   "a Service without selector has no Endpoints or EndpointSlices",
}

// KindMarkdown lists the findings for a command's help.
var KindMarkdown = func() string {
	var md strings.Builder
	for _, k := range Kinds {
		fmt.Fprintf(&md, "* %s: %s\n", k, kindLines[k])
	}
	return strings.TrimRight(md.String(), "\n")
}()

// ParseKinds reads --deny-on's finding names; an unknown one is an error
// of one line listing the known.
func ParseKinds(names []string) (map[Kind]bool, error) {
	out := map[Kind]bool{}
	for _, n := range names {
		k := Kind(strings.TrimSpace(n))
		if !slices.Contains(Kinds, k) {
			known := make([]string, len(Kinds))
			for i, k := range Kinds {
				known[i] = string(k)
			}
			return nil, fmt.Errorf("unknown finding %q; one of %s (see --help)", n, strings.Join(known, ", "))
		}
		out[k] = true
	}
	return out, nil
}
