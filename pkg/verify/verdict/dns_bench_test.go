package verdict

import (
	"fmt"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
)

// BenchmarkJudgeDNS: one replica's answers judged for 1,000 and 10,000
// headless Services. A replica is asked every Service's questions at once
// and judged Service by Service; the time a Service must not grow with
// the Services (it did: 10,000 Services took a 5-minute verify).
func BenchmarkJudgeDNS(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("services=%d", n), func(b *testing.B) {
			svcs := make([]Service, n)
			for i := range svcs {
				svcs[i] = headlessDB(fmt.Sprintf("db-%05d", i), t0.Add(-time.Hour))
			}
			in := dnsInput(svcs, dnsexpect.DefaultTiming(time.Time{}, time.Time{}),
				DNSReading{Replica: "kube-system/coredns-a", Address: "10.244.0.8", Answers: answers(svcs, false), At: t0})
			for b.Loop() {
				if r := Judge(in).DNS[0]; r.Status != dnsexpect.OK {
					b.Fatalf("%s: %s", r.Status, r.Reason)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/service")
		})
	}
}
