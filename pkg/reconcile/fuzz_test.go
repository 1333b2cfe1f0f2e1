package reconcile

import (
	"encoding/json"
	"math/rand"
	"testing"

	discovery "k8s.io/api/discovery/v1"
)

// FuzzPlanInvariants builds an input from the fuzzer's bytes (each byte is a
// choice of the random input generator, so coverage guidance explores the
// input's structure) and checks what must hold whatever the input, against
// a naive reading of upstream's rules (rules_test.go), never against the
// planner's own decisions:
//
//   - every Pod address the rules publish is in the end state exactly once,
//     in a slice of its address type and port group, as the rules say it
//     (conditions, hostname, node, zone, target);
//   - no endpoint of the end state lacks such a Pod address;
//   - every served address type has a slice, no other type has one;
//   - the end state is stable: planning again on it writes nothing;
//   - the plan is deterministic, whatever the order of Pods and slices, and
//     the input is left untouched.
//
// Inputs found by fuzzing stay in testdata/fuzz.
func FuzzPlanInvariants(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03\x00\x01\x05\x00\x02\x04\x01\x00\x03\x00\x07\x01\x00\x05\x02\x03"))
	f.Add([]byte("kubectl-slices plans the EndpointSlices of one Service"))
	f.Add([]byte{6, 0, 3, 2, 1, 1, 0, 0, 4, 9, 1, 0, 0, 2, 2, 5, 7, 0, 1, 3, 6, 2, 0, 1, 1, 4, 0, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkInvariants(t, randomInput(&byteChooser{b: data}))
	})
}

// TestInvariantsOnRandomInputs runs the fuzz target's checks on the
// differential test's generator, so that every `go test` exercises them on
// inputs of every shape, not only on the seed corpus.
func TestInvariantsOnRandomInputs(t *testing.T) {
	for i := 0; i < *diffCases/3; i++ {
		c := randomInput(rand.New(rand.NewSource(int64(7000 + i))))
		t.Run("", func(t *testing.T) { checkInvariants(t, c) })
		if t.Failed() {
			t.Fatalf("case %d (%s)", i, c.desc)
		}
	}
}

func checkInvariants(t *testing.T, c randomCase) {
	before := snapshot(c.in)
	p1, err := Compute(c.in, c.opts)
	if err != nil {
		t.Fatal(err)
	}
	if snapshot(c.in) != before {
		t.Fatal("input modified")
	}
	p2, _ := Compute(c.in, c.opts)
	if planJSON(t, p1) != planJSON(t, p2) {
		t.Fatal("same input, different plans")
	}
	if planJSON(t, p1) != planJSON(t, mustPlan(t, reversed(c.in), c.opts)) {
		t.Fatal("the order of Pods and slices changed the plan")
	}
	checkSliceSizes(t, c, p1)
	end := ourEndState(c.in, c.opts, p1)
	if !p1.Service.Planned() {
		// ExternalName and selectorless Services: live slices are left
		// exactly as they are, as upstream does.
		if !p1.InSync() {
			t.Fatalf("%s Service: the plan writes", p1.Service.Reason)
		}
		return
	}
	checkAgainstRules(t, c.in, end, p1.SuppressedCreates > 0)
	again := c.in
	again.Slices = append(foreign(c.in, c.opts), end...)
	p3 := mustPlan(t, again, c.opts)
	if hintsEnabled(c.in.Service.Annotations) && len(p3.Create)+len(p3.Delete) == 0 {
		// Upstream's topology-mode: Auto rewrites slices whose hints it
		// cannot allocate even when nothing changes (the planner does the
		// same): those writes must then leave every slice as it was.
		if a, b := slicesJSON(t, end), slicesJSON(t, ourEndState(again, c.opts, p3)); a != b {
			t.Fatalf("end state not stable under topology-mode: Auto:\n%s\n%s", a, b)
		}
		return
	}
	if !p3.InSync() {
		t.Fatalf("end state not stable: planning again creates %d, updates %d, deletes %d",
			len(p3.Create), len(p3.Update), len(p3.Delete))
	}
}

// checkAgainstRules is the heart of the fuzz target: the end state holds
// each address the rules publish exactly once, correctly, and nothing else.
// While the Service is being deleted nothing is created, so an address may
// be missing, but none may be wrong or twice.
func checkAgainstRules(t *testing.T, in Input, end []*discovery.EndpointSlice, deleting bool) {
	t.Helper()
	want := ruleEndpoints(in)
	served := ruleServedTypes(in.Service)
	seen := map[string]int{}
	slicesOf := map[discovery.AddressType]int{}
	for _, s := range end {
		if !served[s.AddressType] {
			t.Fatalf("slice %s of unserved address type %s left in place", s.Name, s.AddressType)
		}
		slicesOf[s.AddressType]++
		group := sliceGroupKey(s.Ports)
		for i := range s.Endpoints {
			ep := &s.Endpoints[i]
			name, addr := "", ""
			if ep.TargetRef != nil {
				name = ep.TargetRef.Name
			}
			if len(ep.Addresses) > 0 {
				addr = ep.Addresses[0]
			}
			k := string(s.AddressType) + "|" + name + "|" + addr
			w, ok := want[k]
			if !ok {
				t.Fatalf("slice %s publishes %s, which no eligible Pod address is", s.Name, canonicalEndpoint(ep))
			}
			if w.ports != group {
				t.Fatalf("pod %s address %s in port group %q, want %q", name, addr, group, w.ports)
			}
			if msg := checkRuleEndpoint(in.Service, w, ep); msg != "" {
				t.Fatalf("pod %s in slice %s: %s", name, s.Name, msg)
			}
			if seen[k]++; seen[k] > 1 {
				t.Fatalf("pod %s address %s published twice", name, addr)
			}
		}
	}
	if deleting {
		return
	}
	for k := range want {
		if seen[k] != 1 {
			t.Fatalf("eligible %s published %d times", k, seen[k])
		}
	}
	for at := range served {
		if slicesOf[at] == 0 {
			t.Fatalf("served address type %s has no slice", at)
		}
	}
}

// foreign are the input slices the plan does not own.
func foreign(in Input, o Options) []*discovery.EndpointSlice {
	ours := map[string]bool{}
	for _, s := range filterOurs(in.Slices, in.Service, o.ManagedBy) {
		ours[s.Name] = true
	}
	var out []*discovery.EndpointSlice
	for _, s := range in.Slices {
		if !ours[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// reversed is the same input with Pods and slices in reverse order.
func reversed(in Input) Input {
	out := in
	out.Pods, out.Slices = nil, nil
	for i := len(in.Pods) - 1; i >= 0; i-- {
		out.Pods = append(out.Pods, in.Pods[i])
	}
	for i := len(in.Slices) - 1; i >= 0; i-- {
		out.Slices = append(out.Slices, in.Slices[i])
	}
	return out
}

// slicesJSON serialises slices in name order.
func slicesJSON(t *testing.T, slices []*discovery.EndpointSlice) string {
	sorted := append([]*discovery.EndpointSlice(nil), slices...)
	sortByName(sorted)
	b, err := json.Marshal(sorted)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func planJSON(t *testing.T, p *Plan) string {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
