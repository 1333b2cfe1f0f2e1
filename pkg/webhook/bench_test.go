package webhook

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// BenchmarkServiceFindings judges a Service selecting 5,000 Pods, the
// shape of make bench-webhook's slowest admissions.
func BenchmarkServiceFindings(b *testing.B) {
	var pods []*corev1.Pod
	for i := range 5000 {
		pods = append(pods, pod(fmt.Sprintf("web-%04d", i), map[string]string{"app": "web"}, fmt.Sprintf("10.2.%d.%d", i/250, i%250+1), "web-rs", httpPort))
	}
	for _, target := range []string{"http", "metrics"} {
		s := svc(map[string]string{"app": "web"}, sport("http", 80, intstr.FromString(target)))
		b.Run(target, func(b *testing.B) {
			for b.Loop() {
				if _, err := ServiceFindings(s, Facts{Pods: pods}, reconcile.DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
