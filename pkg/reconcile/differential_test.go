package reconcile

import (
	"flag"
	"fmt"
	"math/rand"
	"testing"

	discovery "k8s.io/api/discovery/v1"
)

var diffCases = flag.Int("diff-cases", 1500, "random inputs the differential test compares with upstream")

// TestDifferentialAgainstUpstream feeds the same random inputs to our planner
// and to upstream k8s.io/endpointslice (the library kube-controller-manager
// runs) and requires the same end state: per address type and port group,
// the same endpoints (addresses, conditions, hostname, node, zone, hints,
// target) and the same number of slices. Which slice an endpoint sits in is
// not compared: upstream picks it at random.
func TestDifferentialAgainstUpstream(t *testing.T) {
	seed := int64(20261121)
	stats := map[string]int{}
	for i := 0; i < *diffCases; i++ {
		r := rand.New(rand.NewSource(seed + int64(i)))
		c := randomInput(r)
		before := snapshot(c.in)
		plan, err := Compute(c.in, c.opts)
		if err != nil {
			t.Fatalf("case %d (%s): %v", i, c.desc, err)
		}
		if after := snapshot(c.in); after != before {
			t.Fatalf("case %d (%s): Compute modified its input", i, c.desc)
		}
		up := runUpstream(c.in, c.opts)
		auto := hintsEnabled(c.in.Service.Annotations)
		ours, ourHints := canonicalState(plan.Final(), auto)
		theirs, theirHints := canonicalState(up.slices, auto)
		if !hintCountsClose(ourHints, theirHints) {
			t.Fatalf("case %d (%s): hints per zone %v, upstream %v", i, c.desc, ourHints, theirHints)
		}
		if plan.SuppressedCreates > 0 {
			// The Service is being deleted and some creates were dropped:
			// upstream recycles a random one of them (any port group) into
			// each update, so only slice counts can be compared.
			ours, theirs = sliceShape(plan.Final()), sliceShape(up.slices)
			stats["terminating Services, shape compared"]++
		}
		if ours != theirs {
			t.Fatalf("case %d (%s, seed %d) differs from upstream\n--- ours\n%s--- upstream\n%s", i, c.desc, seed+int64(i), ours, theirs)
		}
		checkSliceSizes(t, c, plan)
		writes := len(plan.Create) + len(plan.Update) + len(plan.Delete)
		upWrites := up.creates + up.updates + up.dels
		switch {
		case writes == upWrites:
			stats["same write count"]++
		case writes < upWrites:
			stats["fewer writes than upstream"]++
		default:
			stats["more writes than upstream"]++
			if !auto {
				t.Errorf("case %d (%s): %d writes, upstream %d", i, c.desc, writes, upWrites)
			}
		}
		if len(plan.Update)+len(plan.Create)+len(plan.Delete) > 0 {
			stats["cases with writes"]++
		}
		if hasHints(plan.Final()) {
			stats["cases with hints"]++
		}
		if len(plan.Warnings) > 0 {
			stats["cases with warnings"]++
		}
	}
	t.Logf("compared %d random inputs with upstream, 0 mismatches; %v", *diffCases, stats)
}

func hasHints(slices []*discovery.EndpointSlice) bool {
	for _, s := range slices {
		if anyHints(s) {
			return true
		}
	}
	return false
}

// checkSliceSizes: nothing we write exceeds the maximum, except a live slice
// that already did (upstream never splits a slice only to shrink it).
func checkSliceSizes(t *testing.T, c randomCase, plan *Plan) {
	t.Helper()
	liveLen := map[string]int{}
	for _, s := range c.in.Slices {
		liveLen[s.Name] = len(s.Endpoints)
	}
	for _, s := range append(append([]*discovery.EndpointSlice(nil), plan.Create...), plan.Update...) {
		if limit := max(c.opts.MaxEndpointsPerSlice, liveLen[s.Name]); len(s.Endpoints) > limit {
			t.Fatalf("%s: slice %q has %d endpoints, limit %d", c.desc, s.Name, len(s.Endpoints), limit)
		}
	}
}

// sliceShape counts slices per address type.
func sliceShape(slices []*discovery.EndpointSlice) string {
	type shape struct{ slices int }
	m := map[discovery.AddressType]*shape{}
	for _, s := range slices {
		if m[s.AddressType] == nil {
			m[s.AddressType] = &shape{}
		}
		m[s.AddressType].slices++
	}
	out := ""
	for _, at := range []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6, "IP", "FQDN"} {
		if sh := m[at]; sh != nil {
			out += fmt.Sprintf("%s slices=%d\n", at, sh.slices)
		}
	}
	return out
}

// hintCountsClose compares the topology-mode: Auto allocation: the same
// number of hints per address type, and per zone at most one apart, because
// upstream breaks ties between zones of equal need at random.
func hintCountsClose(a, b map[discovery.AddressType]map[string]int) bool {
	for _, at := range []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6} {
		sumA, sumB := 0, 0
		zones := map[string]bool{}
		for z, n := range a[at] {
			sumA += n
			zones[z] = true
		}
		for z, n := range b[at] {
			sumB += n
			zones[z] = true
		}
		if sumA != sumB {
			return false
		}
		for z := range zones {
			if d := a[at][z] - b[at][z]; d > 1 || d < -1 {
				return false
			}
		}
	}
	return true
}
