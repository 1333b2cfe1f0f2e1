package proxyexpect

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The nftables maps kube-proxy dispatches service traffic by
// (pkg/proxy/nftables/proxier.go), in its table "kube-proxy" of family ip
// or ip6.
const (
	NftablesTable               = "kube-proxy"
	NftablesServiceIPsMap       = "service-ips"
	NftablesServiceNodePortsMap = "service-nodeports"
	NftablesNoEndpointServices  = "no-endpoint-services"
	NftablesNoEndpointNodePorts = "no-endpoint-nodeports"
)

const (
	iptablesHashLength = 16
	nftablesHashLength = 8
	// nftablesBaseLenMax is knftables.NameLengthMax (256) less the longest
	// chain prefix kube-proxy allows for (16).
	nftablesBaseLenMax = 256 - 16
)

// PortRef names a service port as kube-proxy names its chains: the
// Service's namespace and name, the port's name and protocol.
type PortRef struct {
	Namespace, Service, Port string
	Protocol                 corev1.Protocol
}

// Chains are the chain names kube-proxy derives for one service port:
// Cluster dispatches to the Cluster policy's endpoints, Local to the Local
// policy's, External handles externally reached traffic under
// externalTrafficPolicy Local, Firewall load balancer source ranges.
// Which of them exist depends on the port; the names do not.
type Chains struct {
	Cluster, Local, External, Firewall string
}

// RefOf names a port of the Service's expected set.
func RefOf(svc *corev1.Service, p Port) PortRef {
	return PortRef{Namespace: svc.Namespace, Service: svc.Name, Port: p.Name, Protocol: p.Protocol}
}

// portName is kube-proxy's ServicePortName.String(): "ns/name", with
// ":port" when the port is named.
func (r PortRef) portName() string {
	if r.Port == "" {
		return r.Namespace + "/" + r.Service
	}
	return r.Namespace + "/" + r.Service + ":" + r.Port
}

func (r PortRef) protocol() string { return strings.ToLower(string(r.Protocol)) }

// IptablesChains are the KUBE-SVC-, KUBE-SVL-, KUBE-EXT- and KUBE-FW-
// chains of the iptables mode: a prefix and the first 16 characters of the
// base32 SHA-256 of the port's name and lower-case protocol.
func IptablesChains(r PortRef) Chains {
	h := hash32(r.portName()+r.protocol(), iptablesHashLength)
	return Chains{Cluster: "KUBE-SVC-" + h, Local: "KUBE-SVL-" + h, External: "KUBE-EXT-" + h, Firewall: "KUBE-FW-" + h}
}

// IptablesEndpointChain is the KUBE-SEP- chain of one endpoint of the port,
// hashed over the port's name, protocol and the endpoint's "IP:port".
func IptablesEndpointChain(r PortRef, ep Endpoint) string {
	return "KUBE-SEP-" + hash32(r.portName()+r.protocol()+ep.String(), iptablesHashLength)
}

// NftablesChains are the service-, local-, external- and firewall- chains
// of the nftables mode: a prefix and "HASH-namespace/service/protocol/port",
// HASH the first 8 characters of the base32 SHA-256 of what follows it.
func NftablesChains(r PortRef) Chains {
	base := hashAndTruncate(fmt.Sprintf("%s/%s/%s/%s", r.Namespace, r.Service, r.protocol(), r.Port))
	return Chains{Cluster: "service-" + base, Local: "local-" + base, External: "external-" + base, Firewall: "firewall-" + base}
}

// NftablesEndpointChain is the endpoint- chain of one endpoint of the port:
// "HASH-namespace/service/protocol/port__IP/port", an IPv6 address's
// colons written as dots (a chain name cannot hold them).
func NftablesEndpointChain(r PortRef, ep Endpoint) string {
	ip := strings.ReplaceAll(ep.IP, ":", ".")
	return "endpoint-" + hashAndTruncate(fmt.Sprintf("%s/%s/%s/%s__%s/%d", r.Namespace, r.Service, r.protocol(), r.Port, ip, ep.Port))
}

// hashAndTruncate prefixes name with a hash of itself and cuts it to the
// longest base a chain name allows, ending it with "..." when cut.
func hashAndTruncate(name string) string {
	name = hash32(name, nftablesHashLength) + "-" + name
	if len(name) > nftablesBaseLenMax {
		name = name[:nftablesBaseLenMax-3] + "..."
	}
	return name
}

func hash32(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:n]
}
