package dnsread

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
)

// Dial opens a TCP connection to one DNS replica's port 53 (a port-forward
// to the Pod, or a plain dial in tests). The connection is closed here.
type Dial func(ctx context.Context) (net.Conn, error)

// Limits bound what one replica may cost. Zero fields take the defaults.
type Limits struct {
	// MaxQuestions is the most questions asked (default 4096); the rest
	// are answered "not asked", so the verdict is at best UNKNOWN.
	MaxQuestions int
	// MaxMessage is the largest answer read, in bytes (default 65535, the
	// most a TCP DNS message can be); a larger length ends the reading.
	MaxMessage int
	// MaxRecords is the most records one answer may hold (default 1024).
	MaxRecords int
	// PerQuestion bounds each exchange (default 5s), within ctx.
	PerQuestion time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxQuestions <= 0 {
		l.MaxQuestions = 4096
	}
	if l.MaxMessage <= 0 || l.MaxMessage > dns.MaxMsgSize {
		l.MaxMessage = dns.MaxMsgSize
	}
	if l.MaxRecords <= 0 {
		l.MaxRecords = 1024
	}
	if l.PerQuestion <= 0 {
		l.PerQuestion = 5 * time.Second
	}
	return l
}

// Check asks one replica every question and holds its answers against
// them. t.Now is set to the end of the reading when zero.
func Check(ctx context.Context, dial Dial, qs []dnsexpect.Question, t dnsexpect.Timing, lim Limits) dnsexpect.Result {
	answers := Ask(ctx, dial, qs, lim)
	if t.Now.IsZero() {
		t.Now = time.Now()
	}
	return dnsexpect.Compare(qs, dnsexpect.Index(answers), t)
}

// Ask asks the questions in order over one TCP connection, one exchange at
// a time, and returns an answer per question asked. A question that could
// not be asked or answered carries Err; once the connection fails, the
// rest carry the same reason.
func Ask(ctx context.Context, dial Dial, qs []dnsexpect.Question, lim Limits) []dnsexpect.Answer {
	lim = lim.withDefaults()
	out := make([]dnsexpect.Answer, 0, len(qs))
	failed := func(from int, reason string) []dnsexpect.Answer {
		for _, q := range qs[from:] {
			out = append(out, dnsexpect.Answer{Name: q.Name, Type: q.Type, Err: reason})
		}
		return out
	}
	conn, err := dial(ctx)
	if err != nil {
		return failed(0, "connect: "+reason(err))
	}
	defer conn.Close()
	// Closing the connection when ctx ends unblocks a read or write.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	for i, q := range qs {
		if i >= lim.MaxQuestions {
			return failed(i, fmt.Sprintf("not asked: more than %d questions", lim.MaxQuestions))
		}
		if ctx.Err() != nil {
			return failed(i, "not asked: "+reason(context.Cause(ctx)))
		}
		a, fatal := exchange(conn, q, uint16(i+1), lim)
		if fatal != nil {
			if ctx.Err() != nil {
				fatal = context.Cause(ctx)
			}
			return failed(i, reason(fatal))
		}
		out = append(out, a)
	}
	return out
}

// exchange writes one query and reads its answer. A fatal error leaves the
// connection unusable (a failed write or read, an oversized length); an
// answer that parses badly is that question's Err alone.
func exchange(conn net.Conn, q dnsexpect.Question, id uint16, lim Limits) (dnsexpect.Answer, error) {
	qtype, ok := dns.StringToType[q.Type]
	if !ok {
		return dnsexpect.Answer{Name: q.Name, Type: q.Type, Err: "unknown type " + q.Type}, nil
	}
	m := new(dns.Msg)
	m.Id = id
	m.RecursionDesired = true
	m.Question = []dns.Question{{Name: dns.Fqdn(q.Name), Qtype: qtype, Qclass: dns.ClassINET}}
	wire, err := m.Pack()
	if err != nil {
		return dnsexpect.Answer{Name: q.Name, Type: q.Type, Err: "query: " + reason(err)}, nil
	}
	_ = conn.SetDeadline(time.Now().Add(lim.PerQuestion))
	frame := binary.BigEndian.AppendUint16(nil, uint16(len(wire)))
	if _, err := conn.Write(append(frame, wire...)); err != nil {
		return dnsexpect.Answer{}, fmt.Errorf("write: %w", err)
	}
	var n [2]byte
	if _, err := io.ReadFull(conn, n[:]); err != nil {
		return dnsexpect.Answer{}, fmt.Errorf("read: %w", err)
	}
	size := int(binary.BigEndian.Uint16(n[:]))
	if size > lim.MaxMessage {
		return dnsexpect.Answer{}, fmt.Errorf("answer of %d bytes, more than %d", size, lim.MaxMessage)
	}
	raw := make([]byte, size)
	if _, err := io.ReadFull(conn, raw); err != nil {
		return dnsexpect.Answer{}, fmt.Errorf("read: %w", err)
	}
	return Parse(q, id, raw, lim.MaxRecords), nil
}

// Parse reads the answer raw to question q sent with id: its rcode, and the
// answer section's A, AAAA, SRV and CNAME records in dnsexpect's form. Any
// malformed, mismatched, truncated or oversized answer is an Answer with
// Err; it never panics on any input.
func Parse(q dnsexpect.Question, id uint16, raw []byte, maxRecords int) (a dnsexpect.Answer) {
	a = dnsexpect.Answer{Name: q.Name, Type: q.Type}
	defer func() {
		if r := recover(); r != nil {
			a = dnsexpect.Answer{Name: q.Name, Type: q.Type, Err: "malformed answer: " + english.Clip(fmt.Sprint(r), english.ClipLen)}
		}
	}()
	m := new(dns.Msg)
	if err := m.Unpack(raw); err != nil {
		a.Err = "malformed answer: " + reason(err)
		return a
	}
	switch {
	case m.Id != id || !m.Response:
		a.Err = fmt.Sprintf("not the answer to query %d", id)
	case len(m.Question) != 1 || !strings.EqualFold(m.Question[0].Name, dns.Fqdn(q.Name)) ||
		dns.TypeToString[m.Question[0].Qtype] != q.Type:
		a.Err = "answer to another question"
	case m.Truncated:
		a.Err = "truncated answer"
	case len(m.Answer) > maxRecords:
		a.Err = fmt.Sprintf("answer of %d records, more than %d", len(m.Answer), maxRecords)
	}
	if a.Err != "" {
		return a
	}
	a.Rcode = dns.RcodeToString[m.Rcode]
	if a.Rcode == "" {
		a.Rcode = "RCODE" + strconv.Itoa(m.Rcode)
	}
	for i, rr := range m.Answer {
		r, ok := record(rr)
		if !ok {
			continue
		}
		a.Records = append(a.Records, r)
		if ttl := rr.Header().Ttl; i == 0 || ttl < a.TTL {
			a.TTL = ttl
		}
	}
	dnsexpect.SortRecords(a.Records)
	return a
}

// record converts the types the kubernetes plugin answers with; others are
// left out of the comparison.
func record(rr dns.RR) (dnsexpect.Record, bool) {
	name := strings.ToLower(rr.Header().Name)
	switch v := rr.(type) {
	case *dns.A:
		ip, ok := netip.AddrFromSlice(v.A)
		if !ok {
			return dnsexpect.Record{}, false
		}
		return dnsexpect.Record{Name: name, Type: dnsexpect.TypeA, Data: ip.Unmap().String()}, true
	case *dns.AAAA:
		ip, ok := netip.AddrFromSlice(v.AAAA)
		if !ok {
			return dnsexpect.Record{}, false
		}
		return dnsexpect.Record{Name: name, Type: dnsexpect.TypeAAAA, Data: ip.String()}, true
	case *dns.SRV:
		data := fmt.Sprintf("%d %d %d %s", v.Priority, v.Weight, v.Port, strings.ToLower(v.Target))
		return dnsexpect.Record{Name: name, Type: dnsexpect.TypeSRV, Data: data}, true
	case *dns.CNAME:
		return dnsexpect.Record{Name: name, Type: dnsexpect.TypeCNAME, Data: strings.ToLower(v.Target)}, true
	}
	return dnsexpect.Record{}, false
}

// reason is err as a reason column words it: a deadline as "timed out",
// anything else clipped to one short line.
func reason(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return english.Clip(err.Error(), english.ClipLen)
}
