// Package lifecycle is the repair lifecycle around sync: Audit (kubectl
// slices check) reads a namespace or the whole cluster through the cluster
// cache and lists what is broken, each finding with the command that repairs
// it; Release hands a Service's slices back to kube-controller-manager once
// its own publish the same endpoints; Prune deletes our slices that outlived
// their Service. The judgements are pkg/explain's (pure); this package reads
// and, for Release and Prune, deletes through pkg/apply with preconditions,
// and only ever slices of our own managed-by value.
package lifecycle
