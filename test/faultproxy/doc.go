// Package faultproxy is a TCP proxy on loopback that puts network faults
// between one client (a replica of the loop) and the API server, so that
// the fault tests can cut, reset or slow one replica's connection while
// the rest of the cluster keeps its own.
//
// It forwards raw bytes and never looks inside them: TLS passes through
// untouched, so the client still verifies (or skips verifying) the API
// server's certificate and authenticates with its own credentials, and
// the audit log names the client's identity, not the proxy's.
//
// Modes (one at a time, for every connection):
//
//   - Pass forwards normally; it is the default.
//   - Blackhole is a partition: no byte crosses in either direction, on
//     old connections or new ones (accepted and held silent). The bytes
//     that arrive meanwhile are dropped, so a TLS stream that lived
//     through it cannot resume; Pass closes those connections and lets new
//     ones through, as a client would see a partition heal.
//   - Reset closes every connection at once with an RST, then passes.
//   - Delay forwards every chunk a fixed time after it was read, in order,
//     in each direction: a request and its answer cost twice the delay.
//
// A target that is down is refused through the proxy too: the connection
// that finds it refusing is reset, and the proxy stops listening until a
// probe (every 50 ms) finds the target accepting again, then listens on the
// same address. Clients handle a refusal apart from a broken connection
// (client-go's reflectors back off on the one and not the other), so a
// proxy that accepted and then closed would change the outage a test
// stages. Blackhole listens even then: a partition is silence.
//
// Blackhole drops bytes rather than holding them so that nothing sent
// during a partition arrives after it: a real partition loses them too,
// and a late write would be a fault of the harness, not of the client.
package faultproxy
