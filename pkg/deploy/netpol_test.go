package deploy

import (
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// The NetworkPolicy isolates the loop's Pods for ingress: the webhook port
// admits the named sources only (every address when none is named), the
// health port everyone.
func TestWebhookNetworkPolicy(t *testing.T) {
	tls := TLS{CertPEM: []byte("c"), KeyPEM: []byte("k"), CABundle: []byte("ca")}
	policy := func(sources ...string) *networkingv1.NetworkPolicy {
		t.Helper()
		o := opts(Cluster)
		o.WebhookSources = sources
		objs, _ := Objects(o)
		out, err := WithWebhook(objs, o, tls, Allowed{})
		if err != nil {
			t.Fatal(err)
		}
		np, ok := out[len(out)-1].(*networkingv1.NetworkPolicy)
		if !ok {
			t.Fatalf("last object %T, want the NetworkPolicy", out[len(out)-1])
		}
		return np
	}
	np := policy("10.0.0.0/24", "fd00::5/128")
	s := np.Spec
	if np.Namespace != "ops" || s.PodSelector.MatchLabels["app.kubernetes.io/name"] != "kubectl-slices" ||
		len(s.PolicyTypes) != 1 || s.PolicyTypes[0] != networkingv1.PolicyTypeIngress || len(s.Ingress) != 2 {
		t.Fatalf("policy %+v", np)
	}
	hook, health := s.Ingress[0], s.Ingress[1]
	if len(hook.Ports) != 1 || hook.Ports[0].Port.IntValue() != WebhookPort || len(hook.From) != 2 ||
		hook.From[0].IPBlock.CIDR != "10.0.0.0/24" || hook.From[1].IPBlock.CIDR != "fd00::5/128" ||
		hook.From[0].PodSelector != nil || hook.From[0].NamespaceSelector != nil {
		t.Errorf("webhook rule %+v: want the two sources only", hook)
	}
	if len(health.Ports) != 1 || health.Ports[0].Port.IntValue() != 8080 || len(health.From) != 0 {
		t.Errorf("health rule %+v: want port 8080 from everyone", health)
	}
	var got []string
	for _, p := range policy().Spec.Ingress[0].From {
		got = append(got, p.IPBlock.CIDR)
	}
	if strings.Join(got, " ") != "0.0.0.0/0 ::/0" {
		t.Errorf("default sources %v", got)
	}
}

func TestCheckSources(t *testing.T) {
	if err := CheckSources([]string{"10.0.0.0/8", "fd00::/64", "192.0.2.1/32"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"10.0.0.1", "10.0.0.0/33", "", "example.com/24"} {
		if err := CheckSources([]string{bad}); err == nil || !strings.Contains(err.Error(), "--webhook-source") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
