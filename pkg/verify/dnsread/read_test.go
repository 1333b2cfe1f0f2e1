package dnsread

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
)

const svcName = "web.ns.svc.cluster.local."

var questions = []dnsexpect.Question{
	{Name: svcName, Type: "A", Want: []dnsexpect.Record{{Name: svcName, Type: "A", Data: "10.1.0.1"}, {Name: svcName, Type: "A", Data: "10.1.0.2"}}},
	{Name: "_http._tcp." + svcName, Type: "SRV", Want: []dnsexpect.Record{{Name: "_http._tcp." + svcName, Type: "SRV", Data: "0 100 80 " + svcName}}},
	{Name: "gone." + svcName, Type: "A"},
}

// serve answers on a loopback TCP port with miekg/dns's server and h, and
// returns a Dial to it.
func serve(t *testing.T, h dns.HandlerFunc) Dial {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: l, Handler: h}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", l.Addr().String())
	}
}

// zone answers from rrs by question, NXDOMAIN for a name it lacks.
func zone(t *testing.T, rrs ...string) dns.HandlerFunc {
	byName := map[string][]dns.RR{}
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		k := strings.ToLower(rr.Header().Name) + "/" + dns.TypeToString[rr.Header().Rrtype]
		byName[k] = append(byName[k], rr)
	}
	return func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		m.Answer = byName[strings.ToLower(q.Name)+"/"+dns.TypeToString[q.Qtype]]
		if m.Answer == nil {
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	}
}

var right = []string{
	svcName + " 30 IN A 10.1.0.2", svcName + " 30 IN A 10.1.0.1",
	"_http._tcp." + svcName + " 30 IN SRV 0 100 80 WEB.ns.svc.cluster.local.",
}

func TestCheckOK(t *testing.T) {
	dial := serve(t, zone(t, right...))
	r := Check(context.Background(), dial, questions, dnsexpect.Timing{}, Limits{})
	if r.Status != dnsexpect.OK || len(r.Answers) != 3 || r.Answers[0].TTL != 30 || r.Answers[2].Rcode != "NXDOMAIN" {
		t.Fatalf("got %+v", r)
	}
}

// A wrong record is drift naming it; the same, just after the change, pending.
func TestCheckDriftNamesTheRecord(t *testing.T) {
	dial := serve(t, zone(t, append(right[1:], "gone."+svcName+" 30 IN A 10.1.0.9")...))
	now := time.Now()
	r := Check(context.Background(), dial, questions, dnsexpect.DefaultTiming(now.Add(-time.Hour), now), Limits{})
	if r.Status != dnsexpect.Drift || !strings.Contains(r.Reason, "missing A "+svcName+" 10.1.0.2") ||
		!strings.Contains(r.Reason, "extra A gone."+svcName+" 10.1.0.9") {
		t.Fatalf("got %s: %s", r.Status, r.Reason)
	}
	r = Check(context.Background(), dial, questions, dnsexpect.DefaultTiming(now.Add(-time.Second), now), Limits{})
	if r.Status != dnsexpect.Pending {
		t.Fatalf("got %s: %s", r.Status, r.Reason)
	}
}

func TestCheckDialFails(t *testing.T) {
	dial := func(context.Context) (net.Conn, error) { return nil, io.ErrUnexpectedEOF }
	r := Check(context.Background(), dial, questions, dnsexpect.Timing{}, Limits{})
	if r.Status != dnsexpect.Unknown || !strings.Contains(r.Reason, "connect: unexpected EOF") {
		t.Fatalf("got %s: %s", r.Status, r.Reason)
	}
}

// rawServer answers every query on its one connection with reply(query).
func rawServer(t *testing.T, reply func(q []byte) []byte) Dial {
	t.Helper()
	return func(ctx context.Context) (net.Conn, error) {
		c, s := net.Pipe()
		go func() {
			defer s.Close()
			for {
				var n [2]byte
				if _, err := io.ReadFull(s, n[:]); err != nil {
					return
				}
				q := make([]byte, binary.BigEndian.Uint16(n[:]))
				if _, err := io.ReadFull(s, q); err != nil {
					return
				}
				out := reply(q)
				if out == nil {
					return
				}
				if _, err := s.Write(out); err != nil {
					return
				}
			}
		}()
		return c, nil
	}
}

func framed(b []byte) []byte { return append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...) }

// answerTo builds a well-formed answer to q, changed by edit.
func answerTo(q []byte, edit func(m *dns.Msg)) []byte {
	in := new(dns.Msg)
	if in.Unpack(q) != nil {
		return nil
	}
	m := new(dns.Msg)
	m.SetReply(in)
	edit(m)
	b, _ := m.Pack()
	return framed(b)
}

// Hostile or broken answers: UNKNOWN with a reason, no panic, bounded.
func TestHostileAnswers(t *testing.T) {
	many := func(m *dns.Msg) {
		for i := range 50 {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: m.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1},
				A: net.IPv4(10, 0, 0, byte(i))})
		}
	}
	for _, c := range []struct {
		name  string
		reply func(q []byte) []byte
		want  string
	}{
		{"garbage", func([]byte) []byte { return framed([]byte("\x00\x01garbage garbage garbage")) }, "malformed answer"},
		{"wrong id", func(q []byte) []byte { return answerTo(q, func(m *dns.Msg) { m.Id++ }) }, "not the answer to query"},
		{"not a response", func(q []byte) []byte { return answerTo(q, func(m *dns.Msg) { m.Response = false }) }, "not the answer to query"},
		{"other question", func(q []byte) []byte {
			return answerTo(q, func(m *dns.Msg) { m.Question[0].Name = "evil.example." })
		}, "answer to another question"},
		{"truncated", func(q []byte) []byte { return answerTo(q, func(m *dns.Msg) { m.Truncated = true }) }, "truncated answer"},
		{"too many records", func(q []byte) []byte { return answerTo(q, many) }, "answer of 50 records, more than 10"},
		{"oversized", func([]byte) []byte { return []byte{0xff, 0xff} }, "answer of 65535 bytes, more than 4096"},
		{"closes", func([]byte) []byte { return nil }, "read: EOF"},
		{"short", func([]byte) []byte { return []byte{0, 40, 1, 2} }, "read: "},
		{"servfail", func(q []byte) []byte { return answerTo(q, func(m *dns.Msg) { m.Rcode = dns.RcodeServerFailure }) }, "answered SERVFAIL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r := Check(ctx, rawServer(t, c.reply), questions[:2], dnsexpect.Timing{}, Limits{MaxMessage: 4096, MaxRecords: 10, PerQuestion: 500 * time.Millisecond})
			if r.Status != dnsexpect.Unknown || !strings.Contains(r.Reason, c.want) {
				t.Fatalf("got %s: %q, want UNKNOWN %q", r.Status, r.Reason, c.want)
			}
		})
	}
}

// A replica that never answers costs the caller's deadline, not more.
func TestStalledReplicaIsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := Check(ctx, rawServer(t, func([]byte) []byte { select {} }), questions, dnsexpect.Timing{}, Limits{})
	if time.Since(start) > 3*time.Second || r.Status != dnsexpect.Unknown || !strings.Contains(r.Reason, "timed out") {
		t.Fatalf("after %s: %s %q", time.Since(start), r.Status, r.Reason)
	}
	r = Check(context.Background(), rawServer(t, func([]byte) []byte { select {} }), questions[:1], dnsexpect.Timing{},
		Limits{PerQuestion: 200 * time.Millisecond})
	if r.Status != dnsexpect.Unknown || !strings.Contains(r.Reason, "timeout") {
		t.Fatalf("per question: %s %q", r.Status, r.Reason)
	}
}

// Only MaxQuestions are asked.
func TestMaxQuestions(t *testing.T) {
	dial := serve(t, zone(t, right...))
	a := Ask(context.Background(), dial, questions, Limits{MaxQuestions: 1})
	if len(a) != 3 || a[0].Err != "" || !strings.Contains(a[1].Err, "more than 1 questions") {
		t.Fatalf("got %+v", a)
	}
}

// Parse never panics, and what it returns is either an error or an rcode.
func FuzzParse(f *testing.F) {
	q := questions[0]
	m := new(dns.Msg)
	m.SetQuestion(q.Name, dns.TypeA)
	m.Id = 1
	m.Response = true
	m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5}, A: net.IPv4(10, 1, 0, 1)}}
	b, _ := m.Pack()
	f.Add(b)
	f.Add([]byte("garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		a := Parse(q, 1, raw, 16)
		if (a.Err == "") == (a.Rcode == "") || len(a.Records) > 16 {
			t.Fatalf("answer %+v", a)
		}
	})
}
