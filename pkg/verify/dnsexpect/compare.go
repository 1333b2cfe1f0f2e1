package dnsexpect

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is one DNS replica's verdict.
type Status string

const (
	// OK: every answer holds exactly the records wanted.
	OK Status = "OK"
	// Drift: an answer lacks a wanted record or holds another, longer
	// after the last change than a replica may serve an older answer.
	Drift Status = "DRIFT"
	// Pending: an answer differs, but the change is younger than that.
	Pending Status = "PENDING"
	// Unknown: the replica could not be read (no connection, a failed
	// or malformed answer) and nothing read shows a difference.
	Unknown Status = "UNKNOWN"
)

// Answer is what a replica answered to one Question: its response code
// ("NOERROR", "NXDOMAIN", ...), the records of the answer section of the
// asked type, the smallest TTL among them, or Err when no usable answer
// came (the reason, one line).
type Answer struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Rcode   string   `json:"rcode,omitempty"`
	Records []Record `json:"records,omitempty"`
	TTL     uint32   `json:"ttl,omitempty"`
	Err     string   `json:"error,omitempty"`
}

// Timing says how long after a change a replica may still serve an older
// answer, and when the change was.
//
// The kubernetes plugin answers from its informers' view, which follows the
// API within an informer's delay (Slack). The cache plugin, where it holds
// the cluster domain, keeps an answer for its record TTL (the plugin's ttl)
// clamped to [5s, the cache's max TTL] (cache.go computeTTL), so an answer
// made just before the change may be served that long after it. kubeadm's
// Corefile sets `ttl 30` and `cache 30` with the cluster domain disabled
// from caching; other Corefiles (`cache 30` alone) cache it.
type Timing struct {
	// PluginTTL is the kubernetes plugin's ttl (kubeadm: 30s; plugin default 5s).
	PluginTTL time.Duration
	// CacheTTL is the cache plugin's max success TTL for the cluster
	// domain; 0 when the domain is not cached.
	CacheTTL time.Duration
	// Slack is the informer delay allowed on top.
	Slack time.Duration
	// Changed is the newest change to the Service and its slices (see
	// LastChange); zero when unknown, and then no difference is pending.
	Changed time.Time
	// Now is when the replica was read.
	Now time.Time
}

// DefaultTiming is a kubeadm Corefile's plugin ttl with the cache assumed
// on (`cache 30`, as before the cluster domain was disabled), and 5s slack.
func DefaultTiming(changed, now time.Time) Timing {
	return Timing{PluginTTL: 30 * time.Second, CacheTTL: 30 * time.Second, Slack: 5 * time.Second, Changed: changed, Now: now}
}

// cacheMinTTL is the cache plugin's default minimum TTL (dnsutil.MinimalDefaultTTL).
const cacheMinTTL = 5 * time.Second

// Window is how long after a change an older answer may still be served.
func (t Timing) Window() time.Duration {
	// A domain the cache does not hold (CacheTTL 0) adds nothing.
	return t.Slack + max(min(max(t.PluginTTL, cacheMinTTL), t.CacheTTL), 0)
}

// Result is one replica's verdict with its evidence.
type Result struct {
	Status  Status   `json:"status"`
	Reason  string   `json:"reason"`
	Missing []Record `json:"missing,omitempty"`
	Extra   []Record `json:"extra,omitempty"`
	Answers []Answer `json:"answers"`
}

// Answers is a replica's answers by name (lower-cased) and type, the last
// one for a question asked twice.
type Answers map[qkey]Answer

// Index indexes a replica's answers for Compare. A replica is asked every
// Service's questions at once and judged Service by Service: index once a
// replica, not once a Service (at 10,000 Services, re-indexing for each
// was most of a 5-minute verify).
func Index(answers []Answer) Answers {
	byKey := make(Answers, len(answers))
	for _, a := range answers {
		byKey[qkey{strings.ToLower(a.Name), a.Type}] = a
	}
	return byKey
}

// Compare holds a replica's answers against the questions (matched by name
// and type; a question without an answer counts as unread).
func Compare(qs []Question, byKey Answers, t Timing) Result {
	res := Result{Answers: make([]Answer, 0, len(qs))}
	unread := ""
	for _, q := range qs {
		a, ok := byKey[qkey{q.Name, q.Type}]
		if !ok {
			a = Answer{Name: q.Name, Type: q.Type, Err: "not asked"}
		}
		res.Answers = append(res.Answers, a)
		if a.Err == "" && a.Rcode != "NOERROR" && a.Rcode != "NXDOMAIN" {
			a.Err = "answered " + a.Rcode
		}
		if a.Err != "" {
			if unread == "" {
				unread = fmt.Sprintf("%s %s: %s", q.Type, q.Name, a.Err)
			}
			continue
		}
		miss, extra := diff(q.Want, a.Records)
		res.Missing = append(res.Missing, miss...)
		res.Extra = append(res.Extra, extra...)
	}
	switch {
	case len(res.Missing)+len(res.Extra) > 0:
		res.Status, res.Reason = Drift, describe(res.Missing, res.Extra)
		if !t.Changed.IsZero() && t.Now.Sub(t.Changed) < t.Window() {
			res.Status = Pending
			res.Reason += fmt.Sprintf(" (%s after the last change, within the %s a replica may serve an older answer)",
				t.Now.Sub(t.Changed).Round(time.Second), t.Window())
		}
	case unread != "":
		res.Status, res.Reason = Unknown, unread
	default:
		res.Status, res.Reason = OK, fmt.Sprintf("%d answers as expected", len(qs))
	}
	return res
}

// diff returns the wanted records not got and the got ones not wanted.
func diff(want, got []Record) (missing, extra []Record) {
	g := map[Record]bool{}
	for _, r := range got {
		g[r] = true
	}
	w := map[Record]bool{}
	for _, r := range want {
		w[r] = true
		if !g[r] {
			missing = append(missing, r)
		}
	}
	for _, r := range got {
		if !w[r] {
			extra = append(extra, r)
			w[r] = true
		}
	}
	return missing, extra
}

// describe names the first differing records: "missing A x. 10.0.0.1;
// extra A x. 10.0.0.2 (and 3 more)".
func describe(missing, extra []Record) string {
	var parts []string
	add := func(label string, rs []Record) {
		if len(rs) == 0 {
			return
		}
		s := label + " " + rs[0].String()
		if len(rs) > 1 {
			s += fmt.Sprintf(" (and %d more)", len(rs)-1)
		}
		parts = append(parts, s)
	}
	add("missing", missing)
	add("extra", extra)
	return strings.Join(parts, "; ")
}

// LastChange is the newest write to svc and its slices the API server
// recorded (managedFields times, to the second). A slice deleted since
// leaves no time behind.
func LastChange(svc *corev1.Service, slices []*discoveryv1.EndpointSlice) time.Time {
	var last time.Time
	note := func(fs []metav1.ManagedFieldsEntry) {
		for _, f := range fs {
			if f.Time != nil && f.Time.After(last) {
				last = f.Time.Time
			}
		}
	}
	note(svc.ManagedFields)
	if svc.CreationTimestamp.After(last) {
		last = svc.CreationTimestamp.Time
	}
	for _, sl := range slices {
		if sl.Namespace != svc.Namespace || sl.Labels[discoveryv1.LabelServiceName] != svc.Name {
			continue
		}
		note(sl.ManagedFields)
		if sl.CreationTimestamp.After(last) {
			last = sl.CreationTimestamp.Time
		}
	}
	return last
}

// severity orders the statuses for Combine: a difference read outweighs
// an answer not read, as in Compare.
var severity = map[Status]int{OK: 0, Unknown: 1, Pending: 2, Drift: 3}

// Combine is one replica's verdict over several Services' results (one
// Ask of all their questions, one Compare per Service with its own
// Timing): the worst status (DRIFT, PENDING, UNKNOWN, OK), the reason of
// the first result with it, and every result's evidence in order.
func Combine(rs []Result) Result {
	out := Result{Status: OK, Answers: []Answer{}}
	worst, alike := -1, 0
	for i, r := range rs {
		out.Missing = append(out.Missing, r.Missing...)
		out.Extra = append(out.Extra, r.Extra...)
		out.Answers = append(out.Answers, r.Answers...)
		switch {
		case worst < 0 || severity[r.Status] > severity[rs[worst].Status]:
			worst, alike = i, 0
		case r.Status == rs[worst].Status:
			alike++
		}
	}
	if worst < 0 {
		out.Reason = "nothing to ask"
		return out
	}
	out.Status, out.Reason = rs[worst].Status, rs[worst].Reason
	if alike > 0 && out.Status != OK {
		out.Reason += fmt.Sprintf("; and %d more %s", alike, out.Status)
	}
	if out.Status == OK {
		n := 0
		for _, r := range rs {
			n += len(r.Answers)
		}
		out.Reason = fmt.Sprintf("%d answers as expected", n)
	}
	return out
}
