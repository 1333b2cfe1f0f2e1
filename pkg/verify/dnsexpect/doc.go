// Package dnsexpect computes what CoreDNS's kubernetes plugin answers for a
// Service from the Service, its EndpointSlices and the cluster domain, and
// holds a DNS replica's answers against it. It is the expected side of the
// DNS check of `kubectl slices verify`; pkg/verify/dnsread asks the replica.
//
// The rules are those of github.com/coredns/coredns v1.15.0,
// plugin/kubernetes (kubernetes.go findServices and endpointHostname,
// object/endpoint.go, object/service.go) and plugin/backend_lookup.go:
//
//   - Which slices: the Service's namespace and kubernetes.io/service-name
//     label; the managed-by label is not read.
//   - Which endpoints: ready true or unset; serving and terminating are not
//     read, nor is publishNotReadyAddresses (the EndpointSlice controller
//     marks such endpoints ready itself).
//   - svc.ns.svc.domain: A/AAAA of the cluster IPs; of every ready address
//     for a headless Service; CNAME to the external name for an
//     ExternalName Service whose name is no IP.
//   - host.svc.ns.svc.domain, for headless and ClusterIP Services alike:
//     the addresses of the ready endpoints whose name is host (the
//     endpoint's hostname, else the address with dashes). Names of endpoints
//     that are not ready are asked too, expecting nothing.
//   - _port._proto.svc.ns.svc.domain per named port: SRV to svc.ns.svc.domain
//     at the service port (ClusterIP), or to each ready endpoint's name at
//     the slice port (headless), priority 0, weight floor(100/n).
//
// Compare's verdict: OK, DRIFT naming the missing and extra records,
// PENDING when the difference is younger than the time a replica may still
// serve an older answer (Timing.Window), UNKNOWN when answers are missing
// and none read differs. CorefileTiming reads that time's parts (the
// kubernetes plugin's ttl, the cache plugin's caps and exceptions) from
// the Corefile; Combine makes one replica's verdict of several Services'.
// The package is pure: no I/O, no clock (the caller passes the time),
// inputs never modified.
package dnsexpect
