package deploy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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

// Without sources, the webhook port admits every address but the Pod
// CIDRs: one ipBlock per family, its except the family's CIDRs in
// canonical form, sorted, without duplicates or nested ones.
func TestWebhookNetworkPolicyPodCIDRs(t *testing.T) {
	o := opts(Cluster)
	o.PodCIDRs = []string{"10.244.2.0/24", "fd00:10:244::/56", "10.244.1.7/24", "10.244.2.0/24", "10.96.0.0/12", "10.100.0.0/16"}
	in := append([]string(nil), o.PodCIDRs...)
	np := networkPolicy(o, nil)
	var got []string
	for _, p := range np.Spec.Ingress[0].From {
		got = append(got, p.IPBlock.CIDR+" except "+strings.Join(p.IPBlock.Except, ","))
	}
	want := "0.0.0.0/0 except 10.96.0.0/12,10.244.1.0/24,10.244.2.0/24; ::/0 except fd00:10:244::/56"
	if strings.Join(got, "; ") != want {
		t.Errorf("webhook peers %q, want %q", strings.Join(got, "; "), want)
	}
	if strings.Join(in, " ") != strings.Join(o.PodCIDRs, " ") {
		t.Errorf("input modified: %v", o.PodCIDRs)
	}
	// Sources win: the Pod CIDRs are not cut out of them.
	np = networkPolicy(o, []string{"192.0.2.0/24"})
	if f := np.Spec.Ingress[0].From; len(f) != 1 || f[0].IPBlock.CIDR != "192.0.2.0/24" || f[0].IPBlock.Except != nil {
		t.Errorf("with a source: %+v", f)
	}
}

func TestPodCIDRs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"10.0.0.0/8 10.1.0.0/16 10.0.0.0/8", "10.0.0.0/8"},
		{"fd00::/64 10.2.0.0/16 10.1.0.0/16", "10.1.0.0/16 10.2.0.0/16 fd00::/64"},
		{"0.0.0.0/0 ::ffff:10.0.0.0/104 junk 10.0.0.0/24", "10.0.0.0/24"},
		{"10.1.0.0/24 10.0.0.0/16 10.1.0.0/16", "10.0.0.0/16 10.1.0.0/16"},
	} {
		if got := strings.Join(PodCIDRs(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("PodCIDRs(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCheckPodCIDRs(t *testing.T) {
	if err := CheckPodCIDRs([]string{"10.244.0.0/16", "fd00:10:244::/56"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"10.0.0.1", "0.0.0.0/0", "::/0", "::ffff:10.0.0.0/104"} {
		if err := CheckPodCIDRs([]string{bad}); err == nil || !strings.Contains(err.Error(), "--pod-cidr") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestFromNodes(t *testing.T) {
	node := func(cidrs ...string) corev1.Node { return corev1.Node{Spec: corev1.NodeSpec{PodCIDRs: cidrs}} }
	got := FromNodes([]corev1.Node{node("10.244.1.0/24", "fd00:0:0:1::/64"), node(), node("10.244.0.0/24")})
	if strings.Join(got.CIDRs, " ") != "10.244.0.0/24 10.244.1.0/24 fd00:0:0:1::/64" || got.Nodes != 3 || got.Without != 1 {
		t.Errorf("FromNodes: %+v", got)
	}
}
