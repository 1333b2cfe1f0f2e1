// Package verify holds nothing but this map of `kubectl slices verify`,
// whose parts are the packages below it, in the order a run takes them:
//
//   - expected: proxyexpect (what kube-proxy on each node should program
//     for a Service) and dnsexpect (the records each DNS replica should
//     serve, and the questions that ask for them); pure.
//   - read: proxyread and dnsread, the bounded readers of what a node
//     answers, never trusting it: proxyread (pure) builds the commands
//     that list a node's rules and parses their output, dnsread asks one
//     DNS replica over the connection the caller dials and holds its
//     answers against dnsexpect's questions.
//   - probe: the cluster I/O. It reads the Services' slices once a round
//     and plans them, finds each node's proxy, reads its tiers with the
//     rights the caller has (the rules through proxyread) and asks the DNS
//     replicas, in rounds.
//   - verdict: the one pure judge. verdict.Judge takes what a round read
//     and returns the Report: a status per node, DNS replica and Service,
//     with the findings and the diagnosis.
//   - watch: the pure core of verify --watch: when a round is due and what
//     a round's statuses change (the Events). pkg/daemon runs the rounds
//     (probe.Run.Verify) from informers and serves the statuses as metrics.
//
// pkg/cmd's verify command runs probe.Run and words its errors and exit
// codes; pkg/printers prints the verdict.Report. Nothing imports this
// package.
package verify
