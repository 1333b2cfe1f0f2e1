// Package dnsread asks one DNS replica (a CoreDNS Pod, reached by the
// caller's Dial, typically a port-forward to its TCP port 53) the questions
// pkg/verify/dnsexpect derives for a Service, and holds the answers against them.
//
// All questions go over one TCP connection, one exchange at a time, with
// github.com/miekg/dns packing and unpacking the messages. The reading is
// bounded in time (the caller's context, and a deadline per exchange), in
// size (the answer's length prefix is checked before anything is read, and
// the number of records per answer), and in count (MaxQuestions). An
// answer that does not parse, answers another query or question, is
// truncated or too large is that question's error, never a panic; a failed
// connection fails the questions left. The verdict is dnsexpect.Compare's.
package dnsread
