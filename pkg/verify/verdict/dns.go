package verdict

import (
	"slices"
	"strings"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
)

// DNSReading is what one DNS replica answered to the questions the
// Services' slices call for (DNSQuestions), or why it was not asked.
type DNSReading struct {
	// Replica is "namespace/name" of the DNS Pod, UID its UID, Address
	// what was asked.
	Replica string
	UID     string
	Address string
	// Unreadable, when set, is why the replica was not asked (a right the
	// caller lacks, a Pod not Running, a port-forward that failed, the DNS
	// Pods not listed); Answers are then not read.
	Unreadable string
	Answers    []dnsexpect.Answer
	// At is when the replica answered: a difference younger than the
	// window after a Service's last change is pending.
	At time.Time
}

// DNSQuestions are the questions each Service's slices call for, by
// Service, under the cluster domain: what the caller asks every replica,
// and what judgeDNS holds their answers against.
func DNSQuestions(svcs []Service, domain string) [][]dnsexpect.Question {
	out := make([][]dnsexpect.Question, len(svcs))
	for i, s := range svcs {
		out[i] = dnsexpect.Expect(s.Service, s.Slices, dnsexpect.Options{Domain: domain})
	}
	return out
}

// judgeDNS is a row per replica, in replica order: each Service's answers
// held against its questions with its own timing (a replica may serve an
// older answer for a window after that Service's last change), combined
// into the replica's verdict.
func judgeDNS(in Input) []DNSRow {
	if len(in.DNS) == 0 {
		return nil
	}
	qs := DNSQuestions(in.Services, in.Domain)
	out := make([]DNSRow, 0, len(in.DNS))
	for _, d := range in.DNS {
		row := DNSRow{Replica: d.Replica, UID: d.UID, Address: d.Address}
		if d.Unreadable != "" {
			row.Result = dnsexpect.Result{Status: dnsexpect.Unknown, Reason: d.Unreadable, Answers: []dnsexpect.Answer{}}
			out = append(out, row)
			continue
		}
		rs := make([]dnsexpect.Result, len(in.Services))
		answers := dnsexpect.Index(d.Answers)
		for j, s := range in.Services {
			t := in.DNSTiming
			t.Changed, t.Now = dnsexpect.LastChange(s.Service, s.Slices), d.At
			rs[j] = dnsexpect.Compare(qs[j], answers, t)
		}
		row.Result = dnsexpect.Combine(rs)
		out = append(out, row)
	}
	slices.SortStableFunc(out, func(a, b DNSRow) int { return strings.Compare(a.Replica, b.Replica) })
	return out
}
