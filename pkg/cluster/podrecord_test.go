package cluster

import (
	corev1 "k8s.io/api/core/v1"
)

// record is what the cache stores of p (Transform of a copy).
func record(p *corev1.Pod) *PodRecord {
	r, _ := Transform(p.DeepCopy())
	return r.(*PodRecord)
}
