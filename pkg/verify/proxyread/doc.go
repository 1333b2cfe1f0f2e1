// Package proxyread reads what a node's service proxy programmed for a set
// of service ports, by name: it derives the chains and map keys kube-proxy
// would program (pkg/verify/proxyexpect's names), asks the node for them through
// at most two execs into the node's kube-proxy Pod, whatever the number of
// Services, and parses the answers into a Reading. It never reads iptables
// comments: the endpoints a chain sends to are its endpoint chains' DNAT
// destinations (iptables) or its DNAT map's (nftables), never derived from
// hashed names or expected endpoints.
//
// Each exec is `/bin/sh -c SCRIPT` (IptablesScript, NftablesScript) with
// one request a line on stdin; the script runs one iptables or nft command
// a request and brackets each output between markers carrying a nonce
// fresh for the exec, so one exec covers any number of requests:
//
//   - iptables, up to Iptables.Targeted ports: KUBE-SERVICES of the nat
//     and filter tables once per family (the dispatch chain, one rule a
//     Service: a rule cannot be checked by its spec without its comment),
//     each port's KUBE-SVC- and KUBE-SVL- chains (iptables -S), then, in a
//     second exec, the KUBE-SEP- chains they jump to. Past that many
//     ports, one exec saves the nat and filter tables of each family
//     (iptables-save, ip6tables-save) and splits them into chains, read
//     as the -S listings: each -S is a process, two a port.
//   - nftables, up to Nftables.Targeted ports: each port's service-ips and
//     no-endpoint-services elements (nft get element) and its service- and
//     local- chains (nft list chain), then, for session affinity only, the
//     endpoint- chains they jump to. Past that many ports, the kube-proxy
//     table of each family is listed once and split: nft 1.0.6 fetches the
//     whole table for every `list chain` and cannot batch listings.
//
// A service, local or endpoint chain (KUBE-SVC-, KUBE-SVL-, KUBE-SEP-;
// service-, local-, endpoint-) is read strictly against the rules
// kube-proxy 1.36 writes into it, not by its DNAT statements alone: a
// drop, reject, accept or return, a jump or goto to any chain but an
// endpoint chain (KUBE-SEP-, endpoint-) or the masquerade mark
// (KUBE-MARK-MASQ, mark-for-masquerade), a DNAT where kube-proxy puts
// none, a numgen map or vmap not covering exactly indexes 0 to N-1, an
// iptables service chain whose last jump to an endpoint chain is
// conditional (traffic falling through it) make the chain unreadable,
// naming the rule. Allowed: nftables "jump mark-for-masquerade" after
// address and port matches only, "ip saddr @affinity-... goto endpoint-...", "update
// @affinity-... { ip saddr }", "meta l4proto P dnat ..." (the numgen
// map in a service chain, one address in an endpoint chain); iptables
// targets KUBE-MARK-MASQ, KUBE-SEP- (service chains, any match: the
// statistic and recent matches) and one DNAT (endpoint chains). An
// endpoint chain's name is not checked against the port and the
// address it DNATs to. An endpoint chain read whole that holds no DNAT
// (kube-proxy never leaves one so: its rule deleted by hand) leaves the
// chain jumping to it read, that endpoint chain in its NoDNAT: what it
// does with traffic is known (nothing delivers it), so it is not unreadable.
//
// The exec itself is the caller's (Exec): this package builds the commands
// and their input and parses their output, so that it is tested without a
// cluster, and so that a broken or hostile node's answer is bounded
// (Limits) and parsed defensively here, in one place: an answer cut,
// malformed, over a bound or an error other than "no such object" makes
// what it should have shown unreadable, with a reason, never present.
package proxyread
