package reconcile

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

// BenchmarkMemoFlip plans one readiness flip from a memo in a Service of
// 200 and of 20,000 Pods: the time per plan should not grow with the
// Service (the watch loop's flip path, as make bench-flip-size measures
// end to end).
func BenchmarkMemoFlip(b *testing.B) {
	for _, n := range []int{200, 20000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			svc := testutil.NewService("shop", "web").UID("svc-uid").ClusterIP("10.0.0.1").Selector("app", "web").Port("http", 80, "8080").Build()
			svc.ResourceVersion = "1"
			nodes := Nodes{ByName: map[string]*corev1.Node{"n1": testutil.NewNode("n1").Zone("zone-a").Build()}}
			in := Input{Service: svc, Nodes: nodes}
			for i := range n {
				in.Pods = append(in.Pods, testutil.NewPod("shop", fmt.Sprintf("web-%05d", i)).Label("app", "web").Node("n1").
					IP(fmt.Sprintf("10.%d.%d.%d", 1+i/65536, i/256%256, i%256)).Ready(true).Build())
			}
			opts := DefaultOptions()
			plan, err := Compute(in, opts)
			if err != nil {
				b.Fatal(err)
			}
			var live = plan.Create
			for i, s := range live {
				s.Name, s.ResourceVersion = fmt.Sprintf("web-%d", i), "1"
			}
			memo, ok := NewMemo(in, opts, live)
			if !ok {
				b.Fatal("no memo")
			}
			flipped := in.Pods[n/2].DeepCopy()
			flipped.Status.Conditions[0].Status = corev1.ConditionFalse
			changes := []PodChange{{Name: flipped.Name, Pod: flipped}}
			b.ResetTimer()
			for b.Loop() {
				if _, _, ok := memo.Plan(svc, changes, nodes, live, opts); !ok {
					b.Fatal("the memo did not plan the flip")
				}
			}
		})
	}
}
