// Package mirror plans the EndpointSlices of a Service without a selector
// from its hand-written Endpoints object, the way kube-controller-manager's
// EndpointSlice mirroring controller (pkg/controller/endpointslicemirroring,
// Kubernetes 1.36) does, under kubectl-slices' own managed-by value.
//
// Rules, as upstream:
//
//  1. Only a Service whose selector is nil, with an Endpoints object of its
//     name, is mirrored. The label endpointslice.kubernetes.io/skip-mirror:
//     "true" or the leader-election annotation on the Endpoints, or a missing
//     Endpoints object, means no mirrored slices: ours are deleted.
//  2. The subsets are repacked (pkg/endpoints.Repack); each subset gives one
//     slice per address type that has addresses, with the subset's ports
//     (name, port, protocol, appProtocol copied; an unnamed port gets "").
//  3. Ready addresses, then not-ready ones, at most MaxEndpointsPerSubset
//     (1000) per subset; addresses that are not IPs are skipped and counted.
//     An endpoint carries the canonical IP, Ready only (no serving or
//     terminating), the target reference, node name and hostname.
//  4. Labels: every label of the Endpoints, then service-name and managed-by
//     set. Annotations: every annotation of the Endpoints but
//     last-change-trigger-time and last-applied-configuration. The owner is
//     the Endpoints object (controller reference). New slices are named
//     "<name>-" + a generated suffix.
//  5. A Service with a selector has no mirrored slices: upstream deletes
//     them once the Service has one. Leftovers names those still there
//     (labelled with the Service's name and the mirroring controller's
//     value, whatever their owner, as upstream selects them), for a run
//     under a controller's value to delete and for check to flag.
//  6. One slice per subset and address type: a live slice of the same key
//     stays when its endpoints, labels and annotations already match, else
//     it is rewritten whole; further slices of a key and slices of keys no
//     longer wanted are deleted; a create and a delete of the same address
//     type become one update.
//
// Deliberate differences, none about which endpoints exist in a stable
// state: endpoints keep the repacked order (upstream pops them from a map);
// a live slice is also rewritten when its owner is not this Endpoints object
// (upstream only when an Endpoints owner has another UID); updates carry the
// resourceVersion read; labels are compared with the labels we would write
// (upstream compares the Endpoints' labels with the slice's minus
// service-name and managed-by, so an Endpoints carrying either label is
// rewritten on every sync); creates and deletes are recycled per address
// type without upstream's recycleSlices slip (it removes the recycled
// create from its list by name, which new slices do not have yet, so with
// two address types it can drop one create and retry another under a taken
// name). One case stays hash-dependent upstream and fixed here: the same
// port with appProtocol in two subsets is two ports to upstream (its map key
// holds the pointer), and when the same address is ready in one and not
// ready in the other, which readiness wins follows upstream's subset order.
//
// The package is pure: it imports only k8s.io/api, k8s.io/apimachinery, the
// standard library and this project's pure planners, performs no I/O, reads
// no clock and never modifies its input.
package mirror
