package proxyread

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// Limits bound what one node may return. The zero value of a field means
// its default.
type Limits struct {
	// ExecBytes is the most one exec may print (its Exec limit).
	ExecBytes int64
	// LineBytes is the longest line read; a longer one makes its listing
	// unreadable (a service chain's map of N endpoints is one line of
	// about 25 bytes an endpoint).
	LineBytes int
	// Lines is the most lines one listing may hold.
	Lines int
	// EndpointChains is the most endpoint chains read in the second
	// round, over all wanted ports.
	EndpointChains int
}

// DefaultLimits: 64 MiB an exec, a line of 1 MiB (some 40,000 endpoints
// in one map), 1,000,000 lines a listing (a whole nftables table of
// 44,000 Services lists some 300,000), 200,000 endpoint chains.
var DefaultLimits = Limits{ExecBytes: 64 << 20, LineBytes: 1 << 20, Lines: 1000000, EndpointChains: 200000}

func (l Limits) orDefault() Limits {
	if l.ExecBytes <= 0 {
		l.ExecBytes = DefaultLimits.ExecBytes
	}
	if l.LineBytes <= 0 {
		l.LineBytes = DefaultLimits.LineBytes
	}
	if l.Lines <= 0 {
		l.Lines = DefaultLimits.Lines
	}
	if l.EndpointChains <= 0 {
		l.EndpointChains = DefaultLimits.EndpointChains
	}
	return l
}

// answer is what the node's script printed for one request: the command's
// exit code and output (stdout and stderr together), or why there is none.
type answer struct {
	rc  int
	out []string
	// missing says why the request has no complete answer ("" when it
	// has one): the output was cut or malformed before its end marker.
	missing string
}

// failed is what an answer is before its output is parsed: why it says
// nothing (it is not complete, or its command failed), or that the object
// asked for is absent, when its command failed as absent says (nil when
// no failure means that). Neither: the command succeeded and its output
// is to be parsed. An error that is not "no such object" is never taken
// for absence: what it should have shown is unreadable, never missing.
func (a answer) failed(absent func(answer) bool) (gone bool, why string) {
	switch {
	case a.missing != "":
		return false, a.missing
	case a.rc != 0 && absent != nil && absent(a):
		return true, ""
	case a.rc != 0:
		return false, failure(a)
	}
	return false, ""
}

// Markers: the script brackets each command's output between
// "@@NONCE begin I" and "@@NONCE end I RC", NONCE fresh for every exec, so
// that a command's output cannot pass for a marker it does not know.
const (
	markBegin = "begin"
	markEnd   = "end"
)

// newNonce returns 16 random hex digits.
func newNonce() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// stdinOf is the script's input: the nonce, then one request a line,
// numbered from 0.
func stdinOf(nonce string, reqs []string) []byte {
	var b strings.Builder
	b.WriteString(nonce + "\n")
	for i, r := range reqs {
		b.WriteString(strconv.Itoa(i) + " " + r + "\n")
	}
	return []byte(b.String())
}

// round runs script once over all requests and splits its output into one
// answer per request. It counts the exec and its bytes into r.
func round(ctx context.Context, exec Exec, script string, reqs []string, lim Limits, r *Reading) ([]answer, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	out, err := exec(ctx, []string{"/bin/sh", "-c", script}, stdinOf(nonce, reqs), lim.ExecBytes)
	r.Execs++
	r.Bytes += int64(len(out))
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	if int64(len(out)) > lim.ExecBytes {
		out = out[:lim.ExecBytes] // an Exec that ignored its limit
	}
	return splitAnswers(string(out), nonce, len(reqs), lim), nil
}

// splitAnswers parses the script's output strictly: answers in request
// order, each between its markers. Whatever follows the first line out of
// place is not trusted: the requests not yet answered get a reason.
func splitAnswers(out, nonce string, n int, lim Limits) []answer {
	ans := make([]answer, n)
	for i := range ans {
		ans[i] = answer{rc: -1, missing: "the node's output ended before its answer"}
	}
	lines := strings.Split(out, "\n")
	begin, end := "@@"+nonce+" "+markBegin+" ", "@@"+nonce+" "+markEnd+" "
	next, in := 0, false
	var cur answer
	for _, line := range lines {
		switch {
		case !in && line == "":
			continue
		case !in:
			if next >= n || line != begin+strconv.Itoa(next) {
				markRest(ans, next, "the node's output is malformed")
				return ans
			}
			in, cur = true, answer{}
		case strings.HasPrefix(line, end):
			rc, ok := endCode(strings.TrimPrefix(line, end), next)
			if !ok {
				markRest(ans, next, "the node's output is malformed")
				return ans
			}
			cur.rc = rc
			ans[next] = cur
			next, in = next+1, false
		case cur.missing != "":
			// already over a bound; skip to the end marker
		case len(line) > lim.LineBytes:
			cur.missing, cur.out = fmt.Sprintf("a line over %d bytes", lim.LineBytes), nil
		case len(cur.out) >= lim.Lines:
			cur.missing, cur.out = fmt.Sprintf("over %d lines", lim.Lines), nil
		default:
			cur.out = append(cur.out, line)
		}
	}
	return ans
}

// endCode parses "I RC" of an end marker, I the request being answered.
func endCode(s string, want int) (int, bool) {
	i, rc, ok := strings.Cut(s, " ")
	if !ok || i != strconv.Itoa(want) {
		return 0, false
	}
	code, err := strconv.Atoi(rc)
	if err != nil || code < 0 || code > 255 {
		return 0, false
	}
	return code, true
}

func markRest(ans []answer, from int, why string) {
	for i := from; i < len(ans); i++ {
		ans[i] = answer{rc: -1, missing: why}
	}
}

// clipLen is how much of what a node printed (a line, a name) a reason
// quotes.
const clipLen = 120

// failure is the reason an answer with a non-zero code gives: its first
// non-empty line, clipped.
func failure(a answer) string {
	for _, l := range a.out {
		if t := strings.TrimSpace(l); t != "" {
			return fmt.Sprintf("exit code %d: %s", a.rc, english.Clip(t, clipLen))
		}
	}
	return fmt.Sprintf("exit code %d", a.rc)
}
