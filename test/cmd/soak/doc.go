// Command soak runs the in-cluster safety net for a long time under churn
// and faults, and checks it from the API server's audit log and the API:
// `make soak` (SOAK_DURATION, default 20m; SOAK_RATE, SOAK_FAULT_EVERY,
// SOAK_OUT; not part of make test).
//
//	soak [-duration 20m] [-rate 3] [-fault-every 3m] [-faults KIND,...] [-out DIR] [-outage 30s] [-settle 60s] ...
//
// # What runs
//
// Its own control plane (test/controlplane) with an audit log,
// kube-controller-manager with its EndpointSlice, namespace and
// garbage-collector controllers, and four Nodes in three zones. Two
// replicas of the plugin, built as make build builds it, run through the
// real kubectl as
//
//	kubectl slices sync --watch --standby --all -A --leader-elect --health-addr 127.0.0.1:PORT
//
// with the Lease in the namespace and under the RBAC `kubectl slices
// deploy` prints, each as a ServiceAccount of its own (soak-a, soak-b)
// whose token is refreshed through a token file, and each behind a fault
// proxy of its own (test/faultproxy). The lease durations are the
// defaults (15 s, 10 s, 2 s), as deploy runs them, and so are
// --takeover-after (5 s) and --handback-hold (30 s). A replica that exits
// is started again as a kubelet would (after 10 s, doubling); exit 4 (the
// Lease lost) is by design and counted, any other exit is a crash.
//
// The churn (churn.go, planned by the pure model.go) makes SOAK_RATE
// changes a second (default 3) in four namespaces of about 45 Services and
// 200 Pods: readiness flips, relabels (a Pod leaves or joins a Service),
// Pods created (with a new address, never reused) and deleted, Services
// created and deleted, selector switches, and every 4 minutes a namespace
// deleted and, once gone, created again and filled. With no kubelet, the
// churn writes Pods' status itself and confirms the deletion of Pods the
// namespace controller deletes.
//
// A fault every SOAK_FAULT_EVERY (default 3m), rotating (faultplan.go):
// kube-controller-manager killed, then started again after -outage; the
// leader's proxy blackholed until the other replica leads, then passed;
// kube-controller-manager frozen (SIGSTOP) for -outage; the leader's
// connections reset; kube-apiserver restarted (5 s down); the leader's
// proxy delayed 300 ms each way for a minute; etcd restarted (5 s down);
// and the leader's watches cut for 6 s across an etcd compaction. No fault
// starts sooner than 10 s after the previous one recovered, nor unless it
// can recover and settle before the end.
//
// # What is checked
//
// From the audit log (the writes of EndpointSlices, Endpoints, Leases,
// Pods, Services and namespaces, at Metadata) and from a sample of every
// slice, Pod, Service and namespace every 250 ms through the admin's own
// connection; never from the loop's output or metrics, except the
// goroutine count its /metrics reports:
//
//   - No EndpointSlice write by the replicas while kube-controller-manager
//     is healthy: a fault that takes it down (killed, frozen, its API
//     server or etcd restarted) is excluded from its start until the
//     controller caught up after its recovery (from the first sample on
//     which every difference between the desired endpoints and its slices
//     open or opening within --takeover-after closed within
//     --takeover-after: after kube-apiserver's restart its informers wait
//     out their backoff for 30 s and more) plus -settle (60 s); a
//     replica's fault only for -settle after its start and after its
//     recovery.
//   - Every Service the controller fails while killed or frozen is taken
//     over within --takeover-after + 2 s of the first change it missed:
//     the difference between the desired endpoints (from the Pods) and the
//     controller's slices as the samples see it, dated by the audit log's
//     time of the churn's write behind it; our first write is the audit
//     log's (takeover.go says how a create, whose name is generated, is
//     matched). A difference that closes in time (a revert, the controller
//     back) is not due. Services ours still serve from an earlier outage
//     are held to the same bound but not counted as takeovers.
//   - No ready endpoint dropped: between two samples, the union of ready
//     addresses of a Service's slices (every manager) never loses one
//     whose Pod stayed ready, selected and unchanged (tracker.go).
//   - Never two writers: from the audit log, each slice write of a replica
//     falls in its own leadership term (terms start at a replica's first
//     successful write of the Lease after the other's), the old leader's
//     last write precedes the new leader's first at every hand-over, and
//     no replica writes the Lease within the lease duration of the other's
//     last renewal.
//   - After the last fault and the churn, `kubectl slices check -A` and
//     `kubectl slices diff --all -A` both exit 0 within 30 s.
//   - Each replica's RSS (/proc/PID/status), goroutines (go_goroutines of
//     /metrics) and open fds (/proc/PID/fd of the kubectl-slices process,
//     which kubectl execs) every 10 s: over the run's last three quarters,
//     each value, smoothed as the median of the minute before it, stays
//     within 10 % of its value at the start of that window. A process
//     started after the run's start is judged from 10 minutes after its
//     start (its warm-up) or the window's start, whichever is later,
//     against itself, if it then lives 3 minutes. resources.csv also
//     splits RSS into anonymous memory (heap, stacks) and file pages (the
//     binary's), so that a finding can be read.
//   - No crash.
//
// A progress line every minute; at the end a summary (summary.txt), the
// time series and events as CSV files (resources.csv, activity.csv,
// faults.csv, takeovers.csv, our-writes.csv, drops.csv, lease-terms.csv)
// and a plot (soak.png), in SOAK_OUT (default a new directory under the
// temporary directory, printed). Exit 0 when every check held, 1 when one
// failed, 2 when the soak could not run, 130 when interrupted. Every
// process it starts runs in a process group of its own, killed with the
// soak, and the whole run is bounded by its duration plus 20 minutes.
package main
