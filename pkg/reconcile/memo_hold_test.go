package reconcile

import (
	"fmt"
	"runtime"
	"testing"
	"weak"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

// TestMemoKeepsNoSlice: a memo stands for our live slices by name and
// resourceVersion, and plans from the live slices it is given. A memo that
// kept the slices it was made from, or those a write returned, would hold
// every slice of the watch loop twice, its copy beside the cache's.
func TestMemoKeepsNoSlice(t *testing.T) {
	svc := testutil.NewService("shop", "web").UID("svc-uid").ClusterIP("10.0.0.1").Selector("app", "web").Port("http", 80, "8080").Build()
	svc.ResourceVersion = "1"
	nodes := Nodes{ByName: map[string]*corev1.Node{"n1": testutil.NewNode("n1").Zone("zone-a").Build()}}
	in := Input{Service: svc, Nodes: nodes}
	for i := range 250 {
		in.Pods = append(in.Pods, testutil.NewPod("shop", fmt.Sprintf("web-%03d", i)).Label("app", "web").Node("n1").
			IP(fmt.Sprintf("10.1.%d.%d", i/256, i%256)).Ready(true).Build())
	}
	opts := DefaultOptions()
	plan, err := Compute(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range plan.Create {
		s.Name, s.ResourceVersion = fmt.Sprintf("web-%d", i), "1"
	}
	// The cache's copies: the same names and versions, other objects.
	cache := copies(plan.Create)
	memo, made := madeFrom(t, in, opts, plan.Create)
	plan = nil

	flipped := in.Pods[7].DeepCopy()
	flipped.Status.Conditions[0].Status = corev1.ConditionFalse
	p, step, ok := memo.Plan(svc, []PodChange{{Name: flipped.Name, Pod: flipped}}, nodes, cache, opts)
	if !ok || len(p.Update) != 1 || len(p.Unchanged) != len(cache)-1 {
		t.Fatalf("the memo did not plan the flip as one update: ok=%v, %d updates, %d unchanged", ok, len(p.Update), len(p.Unchanged))
	}
	for _, s := range p.Unchanged {
		if !isOneOf(s, cache) {
			t.Fatalf("unchanged slice %s is not the live one the memo was given", s.Name)
		}
	}
	written := copies(p.Update)
	written[0].ResourceVersion = "2"
	memo.Commit(step, written)
	returned := weak.Make(written[0])
	for i, s := range cache {
		if s.Name == written[0].Name {
			cache[i] = written[0].DeepCopy() // the cache sees the write
		}
	}
	p, step, written = nil, nil, nil

	runtime.GC()
	for i, w := range append(made, returned) {
		if w.Value() != nil {
			t.Errorf("the memo keeps slice %d of those it was made from or committed alive", i)
		}
	}
	if _, _, ok := memo.Plan(svc, nil, nodes, cache, opts); !ok {
		t.Error("after the commit, the memo does not plan from the cache's slices")
	}
	// A slice listed twice is not the set the memo stands for (Compute
	// would count it twice).
	if _, _, ok := memo.Plan(svc, nil, nodes, append(copies(cache), cache[0].DeepCopy()), opts); ok {
		t.Error("the memo plans although a live slice is listed twice")
	}
}

// madeFrom makes a memo from copies of final and returns weak pointers to
// those copies, held by nothing else.
func madeFrom(t *testing.T, in Input, opts Options, final []*discovery.EndpointSlice) (*Memo, []weak.Pointer[discovery.EndpointSlice]) {
	t.Helper()
	own := copies(final)
	memo, ok := NewMemo(in, opts, own)
	if !ok {
		t.Fatal("no memo")
	}
	var ws []weak.Pointer[discovery.EndpointSlice]
	for _, s := range own {
		ws = append(ws, weak.Make(s))
	}
	return memo, ws
}

func copies(l []*discovery.EndpointSlice) []*discovery.EndpointSlice {
	out := make([]*discovery.EndpointSlice, len(l))
	for i, s := range l {
		out[i] = s.DeepCopy()
	}
	return out
}

func isOneOf(s *discovery.EndpointSlice, l []*discovery.EndpointSlice) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
