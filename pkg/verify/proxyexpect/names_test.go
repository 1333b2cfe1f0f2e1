package proxyexpect

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Chain names kube-proxy 1.36's own tests expect (pkg/proxy/iptables and
// pkg/proxy/nftables proxier_test.go, helpers_test.go).
func TestChainNamesMatchUpstreamVectors(t *testing.T) {
	long := PortRef{
		Namespace: "very-long-namespace-name-abcdefghijklmnopqrstuvwxyz0123456789xx",
		Service:   "very-long-service-name-why-would-you-even-do-this-i-mean-really",
		Port:      "port-443-providing-the-hypertext-transmission-protocol-with-tls",
		Protocol:  corev1.ProtocolSCTP,
	}
	longPrefix := "very-long-namespace-name-abcdefghijklmnopqrstuvwxyz0123456789xx/very-long-service-name-why-would-you-even-do-this-i-mean-really/sctp/port-443-providing-the-hypertext-transmission-protocol-with-tls"
	testing1 := PortRef{Namespace: "testing", Service: "service", Port: "http", Protocol: corev1.ProtocolTCP}
	svc1 := PortRef{Namespace: "ns1", Service: "svc1", Port: "p80", Protocol: corev1.ProtocolTCP}
	ep := func(ip string, port int32) Endpoint { return Endpoint{IP: ip, Port: port} }
	for _, c := range []struct{ got, want string }{
		{IptablesChains(svc1).Cluster, "KUBE-SVC-XPGD46QRK7WJZT7O"},
		{IptablesEndpointChain(svc1, ep("10.180.0.1", 80)), "KUBE-SEP-SXIVWICOYRO3J4NJ"},
		{NftablesChains(svc1).Cluster, "service-ULMVA6XW-ns1/svc1/tcp/p80"},
		{NftablesEndpointChain(svc1, ep("10.180.0.1", 80)), "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80"},
		{NftablesChains(testing1).Local, "local-P4ZYZVCF-testing/service/tcp/http"},
		{NftablesChains(PortRef{Namespace: "testing", Service: "service", Port: "https", Protocol: corev1.ProtocolTCP}).External,
			"external-LZBRENCP-testing/service/tcp/https"},
		{NftablesChains(long).Firewall, "firewall-KR6NACJP-" + longPrefix},
		{NftablesEndpointChain(testing1, ep("10.180.0.2", 80)), "endpoint-5S6H3H22-testing/service/tcp/http__10.180.0.2/80"},
		{NftablesEndpointChain(testing1, ep("fd80:abcd:12::a1b2:c3d4:e5f6:9999", 80)),
			"endpoint-U7E2ET36-testing/service/tcp/http__fd80.abcd.12..a1b2.c3d4.e5f6.9999/80"},
		{NftablesEndpointChain(long, ep("1234:5678:9abc:def0::abc:1234", 443)),
			"endpoint-5YS7AFEA-" + longPrefix + "__1234.5678.9abc.def0..abc.1234/443"},
		{NftablesEndpointChain(long, ep("1234:5678:9abc:def0::abcd:1234:5678", 443)),
			"endpoint-CI6C53Q3-" + longPrefix + "__1234.5678.9abc.def0..abcd.1234..."},
	} {
		if c.got != c.want {
			t.Errorf("got %s\nwant %s", c.got, c.want)
		}
	}
	// An unnamed port is "ns/svc" to iptables, "ns/svc/tcp/" to nftables.
	unnamed := PortRef{Namespace: "ns1", Service: "svc1", Protocol: corev1.ProtocolTCP}
	if IptablesChains(unnamed).Cluster != "KUBE-SVC-"+hash32("ns1/svc1tcp", 16) ||
		NftablesChains(unnamed).Cluster != "service-"+hash32("ns1/svc1/tcp/", 8)+"-ns1/svc1/tcp/" {
		t.Errorf("unnamed port: %+v %+v", IptablesChains(unnamed), NftablesChains(unnamed))
	}
}
