// Package upstreamdiff holds differential tests of kubectl-slices' pure
// planners for mirrored EndpointSlices (pkg/mirror) and legacy Endpoints
// (pkg/endpoints) against kube-controller-manager's own controllers
// (k8s.io/kubernetes pkg/controller/endpointslicemirroring and
// pkg/controller/endpoint), run on client-go's fake clientset with random
// inputs. No API server is needed. It lives in the test module because the
// root module must not import k8s.io/kubernetes.
package upstreamdiff
