// Package upstreamdiff holds differential tests of kubectl-slices' pure
// cores against Kubernetes' own code on random inputs:
//
//   - the planners for mirrored EndpointSlices (pkg/mirror) and legacy
//     Endpoints (pkg/endpoints) against kube-controller-manager's
//     controllers (k8s.io/kubernetes pkg/controller/endpointslicemirroring
//     and pkg/controller/endpoint), run on client-go's fake clientset;
//   - kube-proxy's expected set per node (pkg/verify/proxyexpect) against
//     kube-proxy's own path from Services and slices to endpoints
//     (pkg/proxy: the change trackers, the slice cache,
//     CategorizeEndpoints), and its chain names against the chains the
//     iptables proxier writes to a fake iptables;
//   - the node rule readers (pkg/verify/proxyread) against the rules kube-proxy's
//     proxiers program: the iptables proxier's, answered from its fake and
//     restored into the real iptables, and the nftables proxier's, written
//     into the real nft; the real tools run in a network namespace of the
//     test's own, and the tests skip where none can be made.
//
// No API server is needed. It lives in a module of its own because the
// root module must not import k8s.io/kubernetes.
package upstreamdiff
