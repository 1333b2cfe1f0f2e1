package cluster

import (
	"math/rand/v2"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// record is what the cache stores of p (Transform of a copy).
func record(p *corev1.Pod) *PodRecord {
	r, _ := Transform(p.DeepCopy())
	return r.(*PodRecord)
}

// A record is a runtime.Object, as client-go's debugging checks assert of
// every cached item, and its deep copy equals it and shares nothing: a
// change to any of the copy's values leaves the record as it was.
func TestRecordDeepCopy(t *testing.T) {
	var _ runtime.Object = &PodRecord{}
	r := rand.New(rand.NewPCG(3, 5))
	for i := range 200 {
		rec := record(randomPod(r, i))
		before := PodOf(rec).DeepCopy()
		cp := rec.DeepCopyObject().(*PodRecord)
		if !reflect.DeepEqual(cp, rec) {
			t.Fatalf("pod %d: copy\n%+v\nwant\n%+v", i, cp.Pod(), rec.Pod())
		}
		for k := range cp.Labels {
			cp.Labels[k] = "changed"
		}
		for j := range cp.OwnerReferences {
			cp.OwnerReferences[j].Name = "changed"
		}
		for _, cs := range [][]corev1.Container{cp.Containers, cp.InitContainers} {
			for j := range cs {
				for k := range cs[j].Ports {
					cs[j].Ports[k].ContainerPort++
				}
			}
		}
		for j := range cp.PodIPs {
			cp.PodIPs[j].IP = "changed"
		}
		for j := range cp.Conditions {
			cp.Conditions[j].Status = "changed"
		}
		if got := PodOf(rec); !reflect.DeepEqual(got, before) {
			t.Fatalf("pod %d: changing the copy changed the record:\n%+v\nwant\n%+v", i, got, before)
		}
	}
}
