// Package probe is the cluster side of `kubectl slices verify`: it
// finds each node's service proxy Pod (kube-proxy in kube-system by its
// k8s-app label or its DaemonSet; Cilium, Calico and kube-router agents are
// recognised and reported as not supported), asks the API server with
// SelfSubjectAccessReviews which tiers the caller may use, and reads each
// kube-proxy node's tiers, least privilege first: /healthz and the health
// check node ports through pods/proxy, the metrics and /proxyMode through a
// port-forward to 127.0.0.1, and the rules through pods/exec with the
// pkg/verify/proxyread reader of the node's mode (/proxyMode's answer, else the
// Pod's --proxy-mode, else the mode of its --config file read through the
// same exec). It never uses nodes/proxy. It asks each DNS replica
// (kube-system, k8s-app=kube-dns) the questions the slices call for over a
// port-forward to its TCP 53, at the same time as the nodes are read, and
// keeps what each answered, or why it could not be asked.
//
// Run.Report reads in rounds: each round reads the Services' slices once
// and plans them from that read as sync would (syncer.Many, writing
// nothing), so that the plan and the nodes are held against the same
// slices, then reads every node (those Run.OnlyNodes names, when it names
// some) and replica; verdict.Judge judges the
// round. With Settle, a round that drifts is followed by one more after
// the sync period, with the slices as they are then. The access reviews
// are made once a run. A read of the API a round cannot do without is a
// ReadError, which pkg/cmd words with the flags and exit codes it owns.
//
// Every node is read within a timeout (each HTTP tier within a quarter of
// it, so that a hung kube-proxy's rules are still read), a bounded number
// at once, and every
// answer is read up to a byte limit: a NotReady, unreachable, slow or
// hostile node is a NodeState with the reason, never a hang or a crash.
// What it read is judged by pkg/verify/verdict, the DNS answers too.
package probe
