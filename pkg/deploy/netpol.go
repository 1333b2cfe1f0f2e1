package deploy

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// EveryAddress are the webhook sources when none is named: the API server
// calls webhooks from an address the manifests cannot know (its node's, or
// on clusters that tunnel to nodes, a konnectivity agent's), and a webhook
// it cannot reach refuses the allowed users' writes to our slices
// (failurePolicy Fail) and warns no one.
var EveryAddress = []string{"0.0.0.0/0", "::/0"}

// CheckSources refuses a webhook source that is not a CIDR.
func CheckSources(sources []string) error {
	for _, s := range sources {
		if _, err := netip.ParsePrefix(s); err != nil {
			return fmt.Errorf("--webhook-source %q is not a CIDR (e.g. 10.0.0.0/24, or 10.0.0.5/32 for one address)", s)
		}
	}
	return nil
}

// networkPolicy isolates the loop's Pods for ingress. The health port
// stays open to every source (the kubelet's probes, a metrics scraper;
// /metrics names no object). The webhook port admits the sources only, as
// ipBlocks: Pods elsewhere in the cluster are refused where the network
// plugin does not count their addresses in the blocks (with EveryAddress,
// plugins that match ipBlocks to Pod addresses, as Calico does, let every
// Pod in). Whatever the rules, a NetworkPolicy always lets in the Pod's
// own node.
func networkPolicy(o Options, sources []string) *networkingv1.NetworkPolicy {
	if len(sources) == 0 {
		sources = EveryAddress
	}
	tcp := corev1.ProtocolTCP
	port := func(p int32) []networkingv1.NetworkPolicyPort {
		v := intstr.FromInt32(p)
		return []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &v}}
	}
	from := make([]networkingv1.NetworkPolicyPeer, 0, len(sources))
	for _, s := range sources {
		from = append(from, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: s}})
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
