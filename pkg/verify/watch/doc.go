// Package watch is the pure core of `kubectl slices verify --watch`: when
// the next round is due (Schedule) and what a round's verdict changes
// (State: each node's and DNS replica's status, and the Events a change of
// status is worth). It reads no cluster and keeps no clock: the caller
// (pkg/daemon's verifier) passes the time in.
//
// A round is always whole: every selected Service on every node and DNS
// replica. A node's rules are one listing whatever the Services asked
// about, so a round for one Service would cost a node the same exec and
// leave the node's status made of rounds of different ages; a whole round
// is one verdict.Report, its statuses the ones the one-shot command gives.
package watch
