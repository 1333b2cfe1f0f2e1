package reconcile

import (
	"flag"
	"fmt"
	"math/rand"
	"testing"

	discovery "k8s.io/api/discovery/v1"
)

var diffCases = flag.Int("diff-cases", 2000, "random inputs the differential test compares with upstream")

// TestDifferentialAgainstUpstream feeds the same random inputs to our planner
// and to upstream k8s.io/endpointslice (the library kube-controller-manager
// runs) and requires the same END STATE: the live slices given, minus the
// deletes, with the updates replacing their originals, plus the creates,
// computed the same way from our plan and from upstream's recorded writes.
// Per address type and port group the endpoints (addresses, conditions,
// hostname, node, zone, hints, target), the labels and the number of slices
// must match. Which slice an endpoint sits in is not compared: upstream
// picks it at random. Run with -v to see how many cases cover each dimension.
func TestDifferentialAgainstUpstream(t *testing.T) {
	seed := int64(20261121)
	stats, dims := map[string]int{}, map[string]int{}
	for i := 0; i < *diffCases; i++ {
		c := randomInput(rand.New(rand.NewSource(seed + int64(i))))
		for d := range c.dims {
			dims[d]++
		}
		name := fmt.Sprintf("case %d (%s, seed %d)", i, c.desc, seed+int64(i))
		before := snapshot(c.in)
		plan, err := Compute(c.in, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if after := snapshot(c.in); after != before {
			t.Fatalf("%s: Compute modified its input", name)
		}
		checkPartition(t, name, c, plan)
		up := runUpstream(c.in, c.opts)
		auto := hintsEnabled(c.in.Service.Annotations)
		ourEnd := ourEndState(c.in, c.opts, plan)
		ours, ourHints := canonicalState(ourEnd, auto)
		theirs, theirHints := canonicalState(up.end, auto)
		if auto && !hintCountsClose(ourHints, theirHints) {
			// Upstream's topology-mode: Auto is not deterministic when it
			// gives up part-way (an endpoint without a zone): the stale hints
			// it leaves depend on map order. Ours must then be one of the
			// outcomes upstream produces on the same input.
			for try := 0; try < 50 && !hintCountsClose(ourHints, theirHints); try++ {
				up = runUpstream(c.in, c.opts)
				theirs, theirHints = canonicalState(up.end, auto)
			}
			if !hintCountsClose(ourHints, theirHints) {
				t.Fatalf("%s: hints per zone %v, upstream %v (50 upstream runs)", name, ourHints, theirHints)
			}
			stats["topology-mode Auto, matched one of upstream's outcomes"]++
		}
		if plan.SuppressedCreates > 0 {
			// The Service is being deleted and some creates were dropped:
			// upstream recycles a random one of them (any port group) into
			// each update, so only slice counts can be compared.
			ours, theirs = sliceShape(ourEnd), sliceShape(up.end)
			stats["terminating Services, shape compared"]++
		}
		if ours != theirs {
			t.Fatalf("%s: end state differs from upstream's\n--- ours\n%s--- upstream\n%s", name, ours, theirs)
		}
		checkSliceSizes(t, c, plan)
		writes := len(plan.Create) + len(plan.Update) + len(plan.Delete)
		upWrites := len(up.creates) + len(up.updates) + len(up.deletes)
		switch {
		case writes == upWrites:
			stats["same write count"]++
		case writes < upWrites:
			stats["fewer writes than upstream"]++
		default:
			stats["more writes than upstream"]++
			if !auto {
				t.Errorf("%s: %d writes, upstream %d", name, writes, upWrites)
			}
		}
		if len(plan.Delete) > 0 {
			stats["cases with deletes"]++
		}
		if writes > 0 {
			stats["cases with writes"]++
		}
		if hasHints(ourEnd) {
			stats["cases with hints"]++
		}
	}
	t.Logf("compared the end states of %d random inputs with upstream's, 0 mismatches; %v", *diffCases, stats)
	t.Logf("cases per dimension:\n%s", dimensionReport(dims))
}

// checkPartition: every live slice of ours is in exactly one of Unchanged,
// Update and Delete, and those lists hold nothing else.
func checkPartition(t *testing.T, name string, c randomCase, plan *Plan) {
	t.Helper()
	seen := map[string]int{}
	for _, s := range filterOurs(c.in.Slices, c.in.Service, c.opts.ManagedBy) {
		seen[s.Name] = 0
	}
	for _, list := range [][]*discovery.EndpointSlice{plan.Unchanged, plan.Update, plan.Delete} {
		for _, s := range list {
			n, ok := seen[s.Name]
			if !ok {
				t.Fatalf("%s: plan lists %q, which is not a live slice of ours", name, s.Name)
			}
			seen[s.Name] = n + 1
		}
	}
	for s, n := range seen {
		if n != 1 {
			t.Fatalf("%s: live slice %q is in %d of Unchanged, Update and Delete", name, s, n)
		}
	}
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
	n := map[discovery.AddressType]int{}
	for _, s := range slices {
		n[s.AddressType]++
	}
	out := ""
	for _, at := range []discovery.AddressType{discovery.AddressTypeIPv4, discovery.AddressTypeIPv6, "IP", "FQDN"} {
		if n[at] > 0 {
			out += fmt.Sprintf("%s slices=%d\n", at, n[at])
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
