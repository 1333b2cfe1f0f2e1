// Package deploy builds the manifests that run the watch loop (`kubectl
// slices sync --watch`) in a cluster: a Deployment with least-privilege RBAC
// (cluster-wide, or confined to one namespace), or a sidecar container
// patched into an existing workload. It is a pure builder returning typed
// objects of k8s.io/api; printing them is the command's job, applying them
// the user's. Request and Render are the deploy command's choice of mode
// (cluster, one namespace, a sidecar, with or without the webhook), its
// rules and the manifests it prints, table-tested here; the command only
// maps its flags onto a Request.
//
// Every RBAC rule comes from one table (rules.go) whose entries name the
// code path that needs each verb; the manifests carry that reason as an
// annotation, so a reviewer can audit a verb without reading this source.
package deploy
