package deploy

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// EveryAddress are the webhook sources when none is named: the API server
// calls webhooks from an address the manifests cannot know (its node's, or
// on clusters that tunnel to nodes, a konnectivity agent's), and a webhook
// it cannot reach refuses the allowed users' writes to our slices
// (failurePolicy Fail) and warns no one. Pod CIDRs, when known, are cut
// out of them (podCIDRPeers).
var EveryAddress = []string{"0.0.0.0/0", "::/0"}

// CheckSources refuses a webhook source that is not a CIDR.
func CheckSources(sources []string) error {
	return checkCIDRs("--webhook-source", sources)
}

// CheckPodCIDRs refuses a Pod CIDR that is not a CIDR, or that holds every
// address of its family (the webhook port would admit no one of it).
func CheckPodCIDRs(cidrs []string) error {
	if err := checkCIDRs("--pod-cidr", cidrs); err != nil {
		return err
	}
	for _, s := range cidrs {
		if p := netip.MustParsePrefix(s); p.Bits() == 0 || p.Addr().Is4In6() {
			return fmt.Errorf("--pod-cidr %q cannot be cut out of every address: name the Pod network's own range (e.g. 10.244.0.0/16)", s)
		}
	}
	return nil
}

func checkCIDRs(flag string, cidrs []string) error {
	for _, s := range cidrs {
		if _, err := netip.ParsePrefix(s); err != nil {
			return fmt.Errorf("%s %q is not a CIDR (e.g. 10.0.0.0/24, or 10.0.0.5/32 for one address)", flag, s)
		}
	}
	return nil
}

// PodCIDRs returns cidrs in canonical form (host bits cleared), sorted
// (IPv4 first), without duplicates or a CIDR inside another: the except
// list of the NetworkPolicy, the same whatever the order of the Nodes or
// flags. Entries that are not CIDRs, or that no except may hold (a /0, an
// IPv4-mapped IPv6 prefix), are left out; cidrs is not modified.
func PodCIDRs(cidrs []string) []string {
	var ps []netip.Prefix
	for _, s := range cidrs {
		if p, err := netip.ParsePrefix(s); err == nil && p.Bits() > 0 && !p.Addr().Is4In6() {
			ps = append(ps, p.Masked())
		}
	}
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
	})
	var out []string
	var last netip.Prefix
	for _, p := range ps {
		// CIDRs nest or are disjoint; sorted so, a CIDR inside an earlier
		// kept one is inside the last kept one.
		if last.IsValid() && last.Addr().BitLen() == p.Addr().BitLen() && last.Bits() <= p.Bits() && last.Contains(p.Addr()) {
			continue
		}
		last = p
		out = append(out, p.String())
	}
	return out
}

// NodePodCIDRs are the Pod CIDRs the Nodes carry (spec.podCIDRs, given by
// kube-controller-manager's node IPAM), as PodCIDRs returns them, and how
// many Nodes there are and have none; Err says why they could not be read.
type NodePodCIDRs struct {
	CIDRs          []string
	Nodes, Without int
	Err            error
}

// FromNodes reads the Pod CIDRs of nodes.
func FromNodes(nodes []corev1.Node) NodePodCIDRs {
	var all []string
	without := 0
	for _, n := range nodes {
		if len(n.Spec.PodCIDRs) == 0 {
			without++
		}
		all = append(all, n.Spec.PodCIDRs...)
	}
	return NodePodCIDRs{CIDRs: PodCIDRs(all), Nodes: len(nodes), Without: without}
}

// networkPolicy isolates the loop's Pods for ingress. The health port
// stays open to every source (the kubelet's probes, a metrics scraper;
// /metrics names no object). The webhook port admits the sources only, as
// ipBlocks; with none, every address but the Pod CIDRs: the API server
// calls from its host's address (or a konnectivity agent's, on the host
// network), not from a Pod's. Pods elsewhere in the cluster are refused
// where the network plugin counts their addresses in ipBlocks (as Calico
// does) and the Pod CIDRs are known; where it does not, ipBlocks never
// match them. Whatever the rules, a NetworkPolicy always lets in the Pod's
// own node.
func networkPolicy(o Options, sources []string) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	port := func(p int32) []networkingv1.NetworkPolicyPort {
		v := intstr.FromInt32(p)
		return []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &v}}
	}
	var from []networkingv1.NetworkPolicyPeer
	for _, s := range sources {
		from = append(from, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: s}})
	}
	if len(sources) == 0 {
		from = everyAddressBut(PodCIDRs(o.PodCIDRs))
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: meta(WebhookName, o.Namespace, nil),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: Labels()},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{
				{Ports: port(WebhookPort), From: from},
				{Ports: port(o.HealthPort)},
			},
		},
	}
}

// everyAddressBut is one ipBlock per family, each with the canonical Pod
// CIDRs of its family as except (which must lie strictly inside it: no
// /0, as PodCIDRs ensures).
func everyAddressBut(podCIDRs []string) []networkingv1.NetworkPolicyPeer {
	out := make([]networkingv1.NetworkPolicyPeer, 0, len(EveryAddress))
	for _, every := range EveryAddress {
		family := netip.MustParsePrefix(every).Addr().BitLen()
		var except []string
		for _, c := range podCIDRs {
			if netip.MustParsePrefix(c).Addr().BitLen() == family {
				except = append(except, c)
			}
		}
		out = append(out, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: every, Except: except}})
	}
	return out
}
