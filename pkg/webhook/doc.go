// Package webhook is kubectl-slices' validating admission webhook: an HTTPS
// server for admission.k8s.io/v1 AdmissionReviews at /validate/services and
// /validate/endpointslices, served by `kubectl slices webhook` or by
// `sync --watch` beside the watch loop, from the same informer cache.
//
// The handlers are thin: they decode the review (k8s.io/api/admission/v1),
// ask a pure core and encode its Verdict.
//
//   - ServiceFindings judges a Service with the planner (judge.PlanService)
//     and the explain engine (explain.Build: near misses, ports a Pod lacks)
//     over the Pods the Service selects in the cache: no API request per
//     admission. Pods that share what decides the findings (controller,
//     phase, address families, declared ports) are planned through one
//     representative each (shapes.go). CacheSource reads them from the
//     cache's Pod group index (cluster.PodGroupIndex: namespace, shape and
//     label set), matching the selector once per group, with each group's
//     first Pod and names remembered until the informer reports a change
//     to it: an admission over 5,000 replicas costs about what one over 5
//     does (tens of microseconds), and the findings stay those of the Pods
//     one by one (source_test.go). Decide turns findings into at most a few short
//     warnings, or a denial for the kinds --deny-on names. The Services
//     webhook never denies by default and is registered failurePolicy
//     Ignore: a down webhook must not stop deployments.
//     Pod names, labels, owners and ports are in a finding's Message; its
//     Hidden text says the same without them, for a writer who may not
//     list the namespace's Pods (PodAccess: AccessCache asks a
//     SubjectAccessReview on a miss and remembers the answer per user and
//     namespace, so the steady state stays at no API request; its reviews
//     are rate-limited for all users together, so no flood of users is an
//     amplifier). The review's userInfo is the API server's word only when
//     the API server sent it: a caller whose client certificate the TLS
//     server did not verify against --client-ca-file (ClientCAs) may claim
//     any user, so it gets the Hidden text and costs no review
//     (clientauth.go).
//   - Guard.Judge refuses CREATE and UPDATE of our slices (those under any
//     value we write, reconcile.IsOurs: both controllers' values when ours
//     is one of them) unless the writer,
//     as the API server authenticated it (the review's userInfo), is one the
//     flags allow (the loop's ServiceAccount, --allow-user, --allow-group,
//     sync --watch's own user) and writes with kubectl-slices' field
//     manager (the one the API server passes in the request's
//     CreateOptions/UpdateOptions; a patch arrives as an update carrying the
//     patch's field manager, e.g. kubectl-label, kubectl-patch, kubectl-edit).
//     The field manager is the client's word and never admits anyone alone:
//     it tells an allowed writer's sync from its hand edit, an accident the
//     next sync would undo. DELETE is always allowed, and so is an update
//     that only removes ownerReferences or clears their blockOwnerDeletion,
//     and only removes finalizers (OwnerMetadataOnly: the garbage
//     collector's writes, whatever identity it runs as; they give no one
//     more than DELETE). An ownerReference added or otherwise altered is
//     judged as any other write.
//   - The same Judge refuses CREATE and UPDATE of a slice under
//     kube-controller-manager's managed-by values (ControllerValues) by
//     anyone but the controller manager's identities (Guard.ControllerUsers,
//     --controller-user; DefaultControllerUsers): a label is the client's
//     word, and a forged controller slice would make the loop hand its
//     Service back (controller.go).
//   - TLS: 1.3, or 1.2 with ECDHE and AEAD suites only (listen.go); with
//     ClientCAs, every caller must present a client certificate they
//     signed, or is refused at the handshake. The server's timeouts and
//     connection bound are Limits (pkg/serve): idle and silent
//     connections are closed, at most MaxConns are served at once and at
//     most MaxPerSource from one remote address; past either, a new
//     connection is closed at once.
//
// The webhook writes nothing to the cluster: it reads through the cache
// (pkg/cluster) and judges with pkg/explain and pkg/judge, and imports no
// package that writes (hack/purity's read-only rule); beyond the cache's
// reads, its only requests are access reviews.
//
// Certificates: CertReloader re-reads the pair when either file's size or
// modification time changes, checked on every TLS handshake. We chose it
// over k8s.io/apiserver's DynamicServingCertKeyContentFromFiles and
// controller-runtime's certwatcher because either would pull a large module
// graph (apiserver, or controller-runtime with fsnotify) into a kubectl
// plugin for some forty lines of behaviour, and a stat per handshake (a few
// microseconds beside a handshake's milliseconds) needs no file watcher,
// which also misses the atomic symlink swaps of Secret volumes unless it
// watches the directory.
package webhook
