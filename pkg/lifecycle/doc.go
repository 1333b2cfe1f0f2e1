// Package lifecycle is the repair lifecycle around sync: Audit (kubectl
// slices check) reads a namespace or the whole cluster through the cluster
// cache and lists what is broken, each finding with the command that repairs
// it; Release hands a Service's slices back to kube-controller-manager once
// its own publish the same endpoints; Prune deletes our slices that outlived
// their Service. The judgements are pkg/explain's (pure); this package reads
// and, for Release and Prune, deletes through pkg/apply with preconditions,
// and only ever slices of our own managed-by value.
//
// The v1 Endpoints objects sync --with-endpoints writes (marked
// endpoints.kubernetes.io/managed-by with our value) are covered alike:
// Audit reports ours stale or orphaned, Prune deletes ours whose Service is
// gone, lost its selector or became ExternalName, and Release hands ours
// back without deleting them (ReleaseEndpoints). An Endpoints object without
// our mark is never written.
//
// Audit plans each Service through judge.PlanService, as sync does, so the
// mirrored slices of a Service without selector are judged against its
// Endpoints object (read with a GET each, optional: without the right, it
// says what it skipped). It also lists the controllers' slices once more,
// paged and with the managedFields the cache drops, for
// explain.ForeignWriters: a hint at slices under a controller's value that
// another field manager wrote. CheckForeign refuses a writing run under a
// managed-by value whose slices kubectl-slices did not write.
package lifecycle
