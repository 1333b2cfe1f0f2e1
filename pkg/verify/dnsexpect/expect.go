package dnsexpect

import (
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// DefaultDomain is the cluster domain kubeadm and the kubelet default to.
const DefaultDomain = "cluster.local"

// Record types asked.
const (
	TypeA     = "A"
	TypeAAAA  = "AAAA"
	TypeSRV   = "SRV"
	TypeCNAME = "CNAME"
)

// Record is one resource record as compared: its owner name (lower case,
// fully qualified), type, and data (A/AAAA: the address; CNAME: the target;
// SRV: "priority weight port target"). The TTL is not part of it: it says
// how old an answer is, not what it is.
type Record struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Data string `json:"data"`
}

func (r Record) String() string { return r.Type + " " + r.Name + " " + r.Data }

// Question is one name and type to ask a replica, and the records its
// answer section must hold; none means NXDOMAIN or an empty NOERROR.
type Question struct {
	Name string   `json:"name"`
	Type string   `json:"type"`
	Want []Record `json:"want,omitempty"`
}

// Options are the kubernetes plugin's settings the records depend on.
type Options struct {
	// Domain is the cluster domain the plugin serves; "" means cluster.local.
	Domain string
	// EndpointPodNames is the plugin's endpoint_pod_names option: an
	// endpoint without a hostname is named after its Pod, not its address.
	EndpointPodNames bool
}

// Expect returns the questions that cover what CoreDNS's kubernetes plugin
// serves for svc from slices, sorted by name and type. The slices are those
// of svc's namespace; the plugin indexes them by their
// kubernetes.io/service-name label alone, whatever manages them.
func Expect(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, opt Options) []Question {
	base := serviceName(svc, opt.Domain)
	b := builder{qs: map[qkey]*Question{}}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		// kubernetes.go findServices: a CNAME only when the name is no IP
		// (msg.Service.HostType); the A/AAAA of it would need an upstream.
		b.ask(base, TypeCNAME)
		if _, err := netip.ParseAddr(svc.Spec.ExternalName); err != nil && svc.Spec.ExternalName != "" {
			b.want(Record{base, TypeCNAME, fqdn(svc.Spec.ExternalName)})
		}
		return b.sorted()
	}
	eps := readyAddresses(svc, slices, opt.EndpointPodNames)
	b.ask(base, TypeA)
	b.ask(base, TypeAAAA)
	if headless(svc) {
		for _, e := range eps.ready {
			b.want(Record{base, familyType(e.ip), e.ip.String()})
		}
	} else {
		for _, ip := range clusterIPs(svc) {
			b.want(Record{base, familyType(ip), ip.String()})
		}
	}
	// Endpoint names answer for ClusterIP Services too: findServices takes
	// the endpoint branch whenever the name has an endpoint label. Names of
	// endpoints that are not ready are asked too, expecting nothing, so a
	// replica that still serves them is seen.
	for _, e := range eps.all {
		b.ask(e.host+"."+base, familyType(e.ip))
	}
	for _, e := range eps.ready {
		b.want(Record{e.host + "." + base, familyType(e.ip), e.ip.String()})
	}
	for _, p := range namedPorts(svc, slices) {
		name := "_" + strings.ToLower(p.name) + "._" + strings.ToLower(p.proto) + "." + base
		b.ask(name, TypeSRV)
		for _, r := range srvRecords(name, base, svc, eps.ready, p) {
			b.want(r)
		}
	}
	return b.sorted()
}

// serviceName is svc.ns.svc.domain., lower case.
func serviceName(svc *corev1.Service, domain string) string {
	if domain == "" {
		domain = DefaultDomain
	}
	return strings.ToLower(svc.Name + "." + svc.Namespace + ".svc." + strings.TrimSuffix(domain, ".") + ".")
}

func fqdn(s string) string {
	s = strings.ToLower(s)
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// headless is object.Service.Headless: the first cluster IP is "None".
func headless(svc *corev1.Service) bool {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	return ips[0] == corev1.ClusterIPNone
}

// clusterIPs are the Service's cluster IPs that parse (object.ToService
// falls back to spec.clusterIP when spec.clusterIPs is empty).
func clusterIPs(svc *corev1.Service) []netip.Addr {
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 {
		ips = []string{svc.Spec.ClusterIP}
	}
	var out []netip.Addr
	for _, s := range ips {
		if ip, err := netip.ParseAddr(s); err == nil {
			out = append(out, ip.Unmap())
		}
	}
	return out
}

func familyType(ip netip.Addr) string {
	if ip.Is4() {
		return TypeA
	}
	return TypeAAAA
}

// endpoint is one address of a slice endpoint as the plugin keeps it.
type endpoint struct {
	ip    netip.Addr
	host  string // the endpoint label of its name (kubernetes.go endpointHostname)
	ports []discoveryv1.EndpointPort
}

type endpointSet struct{ ready, all []endpoint }

// readyAddresses are the addresses of svc's slices, and among them the ones
// CoreDNS serves: object/endpoint.go keeps an endpoint only when its ready
// condition is true or unset, and ignores serving and terminating.
// Addresses that are no IP (FQDN slices) are left out.
func readyAddresses(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, podNames bool) endpointSet {
	var s endpointSet
	for _, sl := range slices {
		if sl.Namespace != svc.Namespace || sl.Labels[discoveryv1.LabelServiceName] != svc.Name {
			continue
		}
		for _, ep := range sl.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			for _, a := range ep.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil {
					continue
				}
				e := endpoint{ip: ip.Unmap(), host: endpointHostname(ep, a, podNames), ports: sl.Ports}
				s.all = append(s.all, e)
				if ready {
					s.ready = append(s.ready, e)
				}
			}
		}
	}
	return s
}

// endpointHostname is kubernetes.go endpointHostname: the hostname, else
// (endpoint_pod_names) the Pod's name when shorter than 64, else the
// address with its dots or colons turned to dashes ("-0" closing an IPv6
// address that ends in "::").
func endpointHostname(ep discoveryv1.Endpoint, addr string, podNames bool) string {
	if ep.Hostname != nil && *ep.Hostname != "" {
		return strings.ToLower(*ep.Hostname)
	}
	if podNames && ep.TargetRef != nil && ep.TargetRef.Name != "" && len(ep.TargetRef.Name) < 64 {
		return strings.ToLower(ep.TargetRef.Name)
	}
	if strings.Contains(addr, ".") {
		return strings.ReplaceAll(addr, ".", "-")
	}
	h := strings.ReplaceAll(addr, ":", "-")
	if strings.HasSuffix(h, "-") {
		h += "0"
	}
	return strings.ToLower(h)
}

type portKey struct{ name, proto string }

// namedPorts are the (name, protocol) pairs an SRV name can be asked for:
// the Service's named ports and, for the endpoint branch, the slices'.
func namedPorts(svc *corev1.Service, slices []*discoveryv1.EndpointSlice) []portKey {
	seen := map[portKey]bool{}
	add := func(name string, proto string) {
		if name != "" {
			seen[portKey{strings.ToLower(name), strings.ToLower(proto)}] = true
		}
	}
	for _, p := range svc.Spec.Ports {
		add(p.Name, string(p.Protocol))
	}
	if headless(svc) {
		for _, sl := range slices {
			if sl.Namespace != svc.Namespace || sl.Labels[discoveryv1.LabelServiceName] != svc.Name {
				continue
			}
			for _, p := range sl.Ports {
				if p.Name != nil && p.Protocol != nil {
					add(*p.Name, string(*p.Protocol))
				}
			}
		}
	}
	out := make([]portKey, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].name < out[j].name || out[i].name == out[j].name && out[i].proto < out[j].proto
	})
	return out
}

// srvRecords is what backend_lookup.go SRV answers for _port._proto.base:
// one entry per matching (cluster IP, service port) of a ClusterIP
// Service, or per matching (ready address, slice port) of a headless one;
// entries deduplicated by (target, port); priority 0 and a weight of
// floor(100/n) (at least 1) for n entries before deduplication.
func srvRecords(name, base string, svc *corev1.Service, ready []endpoint, p portKey) []Record {
	type entry struct {
		target string
		port   int32
	}
	var es []entry
	if headless(svc) {
		for _, e := range ready {
			for _, sp := range e.ports {
				if sp.Name != nil && sp.Protocol != nil && strings.EqualFold(*sp.Name, p.name) &&
					strings.EqualFold(string(*sp.Protocol), p.proto) {
					port := int32(-1)
					if sp.Port != nil {
						port = *sp.Port
					}
					es = append(es, entry{e.host + "." + base, port})
				}
			}
		}
	} else {
		for _, sp := range svc.Spec.Ports {
			if strings.EqualFold(sp.Name, p.name) && strings.EqualFold(string(sp.Protocol), p.proto) {
				for range clusterIPs(svc) {
					es = append(es, entry{base, sp.Port})
				}
			}
		}
	}
	if len(es) == 0 {
		return nil
	}
	weight := uint16(math.Floor(100.0 / float64(100*len(es)) * 100))
	weight = max(weight, 1)
	var out []Record
	seen := map[entry]bool{}
	for _, e := range es {
		if e.port == -1 || seen[e] {
			continue
		}
		seen[e] = true
		data := "0 " + strconv.Itoa(int(weight)) + " " + strconv.Itoa(int(uint16(e.port))) + " " + e.target
		out = append(out, Record{name, TypeSRV, data})
	}
	return out
}

type qkey struct{ name, typ string }

// builder collects questions and their wanted records without duplicates.
type builder struct {
	qs map[qkey]*Question
}

func (b *builder) ask(name, typ string) {
	if b.qs[qkey{name, typ}] == nil {
		b.qs[qkey{name, typ}] = &Question{Name: name, Type: typ}
	}
}

func (b *builder) want(r Record) {
	b.ask(r.Name, r.Type)
	q := b.qs[qkey{r.Name, r.Type}]
	for _, w := range q.Want {
		if w == r {
			return
		}
	}
	q.Want = append(q.Want, r)
}

func (b *builder) sorted() []Question {
	out := make([]Question, 0, len(b.qs))
	for _, q := range b.qs {
		SortRecords(q.Want)
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].Type < out[j].Type
	})
	return out
}

// SortRecords sorts records by name, type and data.
func SortRecords(rs []Record) {
	sort.Slice(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		return a.Data < b.Data
	})
}
