package reconcile

import (
	"encoding/json"
	"math/rand"
	"testing"

	discovery "k8s.io/api/discovery/v1"
)

// FuzzPlanInvariants checks, for random inputs, what must hold whatever the
// input: the same input plans byte-identically, no endpoint is published
// twice, nothing we write exceeds the maximum, every included Pod appears
// exactly once per address type it has an endpoint for, and the input is
// left untouched. Seeds found by fuzzing stay in testdata/fuzz.
func FuzzPlanInvariants(f *testing.F) {
	for _, seed := range []int64{1, 2, 3, 42, 20261121} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		c := randomInput(rand.New(rand.NewSource(seed)))
		before := snapshot(c.in)
		p1, err := Compute(c.in, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		p2, _ := Compute(c.in, c.opts)
		if a, b := planJSON(t, p1), planJSON(t, p2); a != b {
			t.Fatal("same input, different plans")
		}
		if snapshot(c.in) != before {
			t.Fatal("input modified")
		}
		checkSliceSizes(t, c, p1)
		if !p1.Service.Planned() {
			// ExternalName and selectorless Services: live slices are left
			// exactly as they are, duplicates included, as upstream does.
			return
		}
		seen := map[discovery.AddressType]map[epKey]int{}
		for _, s := range p1.Final() {
			if seen[s.AddressType] == nil {
				seen[s.AddressType] = map[epKey]int{}
			}
			for i := range s.Endpoints {
				k := keyOf(&s.Endpoints[i])
				if seen[s.AddressType][k]++; seen[s.AddressType][k] > 1 {
					t.Fatalf("endpoint %+v published twice", k)
				}
			}
		}
		for _, d := range p1.Pods {
			if d.Included != (len(d.Endpoints) > 0) || (!d.Included && d.Reason == "") {
				t.Fatalf("decision %+v", d)
			}
			for _, e := range d.Endpoints {
				if seen[e.AddressType][keyOf(&e.Endpoint)] != 1 {
					t.Fatalf("pod %s endpoint %v not published exactly once", d.Name, e.Endpoint.Addresses)
				}
			}
		}
	})
}

func planJSON(t *testing.T, p *Plan) string {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
