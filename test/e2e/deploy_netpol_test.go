package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// deploy --webhook prints a NetworkPolicy that admits the webhook port from
// the --webhook-source CIDRs only (every address, said on stderr, when none
// is named) and the health port from everyone; --webhook-client-ca puts the
// API server's webhook client CA in a ConfigMap the webhook requires. The
// objects pass the API server's validation; a source that is not a CIDR is
// a usage error and nothing is printed.
func TestDeployWebhookNetworkPolicy(t *testing.T) {
	ns := newNamespace(t, shared)
	caFile := filepath.Join(t.TempDir(), "client-ca.crt")
	ca := writeServingCert(t, t.TempDir()) // any PEM certificate stands for the CA
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	objs := deployObjects(t, shared, "-n", ns, "--webhook", "--webhook-source", "10.0.0.0/24,fd00:10::/64", "--webhook-client-ca", caFile)
	nps := ofKinds(objs, "NetworkPolicy")
	if len(nps) != 1 {
		t.Fatalf("%d NetworkPolicies", len(nps))
	}
	rules, _, _ := unstructured.NestedSlice(nps[0].Object, "spec", "ingress")
	var got []string
	for _, r := range rules {
		r := r.(map[string]any)
		ports, _, _ := unstructured.NestedSlice(r, "ports")
		port, _, _ := unstructured.NestedFieldNoCopy(ports[0].(map[string]any), "port")
		from, _, _ := unstructured.NestedSlice(r, "from")
		var cidrs []string
		for _, f := range from {
			c, _, _ := unstructured.NestedString(f.(map[string]any), "ipBlock", "cidr")
			cidrs = append(cidrs, c)
		}
		got = append(got, strings.TrimSpace(strings.Join(append([]string{fmt.Sprint(port)}, cidrs...), " ")))
	}
	if strings.Join(got, "; ") != "8443 10.0.0.0/24 fd00:10::/64; 8080" {
		t.Errorf("ingress rules %q, want the webhook port from the two sources and the health port from everyone", got)
	}
	cms := ofKinds(objs, "ConfigMap")
	if len(cms) != 1 || !strings.Contains(cms[0].Object["data"].(map[string]any)["ca.crt"].(string), "BEGIN CERTIFICATE") {
		t.Fatalf("ConfigMaps %v", cms)
	}
	if args := strings.Join(containerArgs(t, objs), " "); !strings.Contains(args, "--client-ca-file=/etc/kubectl-slices/client-ca/ca.crt") {
		t.Errorf("container args %s lack --client-ca-file", args)
	}
	kubectl(t, shared, "apply", "--dry-run=server", "-f", manifestFile(t, ofKinds(objs, "NetworkPolicy", "ConfigMap", "ServiceAccount", "Deployment"))).mustCode(t, 0)

	r := slices(t, "deploy", "-n", ns, "--webhook", "-o", "json").mustCode(t, 0)
	if !strings.Contains(r.Stderr, "the NetworkPolicy admits the webhook port from every address") {
		t.Errorf("no note on stderr without --webhook-source:\n%s", r.Stderr)
	}
	r = slices(t, "deploy", "--webhook", "--webhook-source", "10.0.0.1")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, `--webhook-source "10.0.0.1" is not a CIDR`) {
		t.Errorf("a source that is not a CIDR: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// containerArgs are the Deployment's first container's args.
func containerArgs(t testing.TB, objs []unstructured.Unstructured) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(podSpecOf(t, objs), "containers")
	args, _, _ := unstructured.NestedStringSlice(cs[0].(map[string]any), "args")
	return args
}

// Without --webhook-source, deploy --webhook reads the Nodes' spec.podCIDRs
// from the real API server and admits the webhook port from every address
// but them (the except lists pass the API server's validation); --pod-cidr
// names them instead, without reading; with no cluster to read, every
// address, said on stderr with --pod-cidr.
func TestDeployWebhookPodCIDRs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	for i, cidrs := range [][]string{{"10.244.1.0/24", "fd00:10:244:1::/64"}, {"10.244.0.0/24", "fd00:10:244::/64"}, nil} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
		if _, err := cp.Admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cp.Namespace(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	deploy := func(args ...string) (string, string) {
		t.Helper()
		r := kubectl(t, cp, append([]string{"slices", "deploy", "--webhook", "-n", "ops", "-o", "json"}, args...)...).mustCode(t, 0)
		var list unstructured.UnstructuredList
		if err := list.UnmarshalJSON([]byte(r.Stdout)); err != nil {
			t.Fatal(err)
		}
		nps := ofKinds(list.Items, "NetworkPolicy")
		kubectl(t, cp, "apply", "--dry-run=server", "-f", manifestFile(t, nps)).mustCode(t, 0)
		return webhookPeers(t, nps[0]), r.Stderr
	}
	peers, stderr := deploy()
	if want := "0.0.0.0/0 except 10.244.0.0/24,10.244.1.0/24; ::/0 except fd00:10:244::/64,fd00:10:244:1::/64"; peers != want {
		t.Errorf("webhook peers %q, want %q", peers, want)
	}
	if !strings.Contains(stderr, "every address but the Nodes' Pod CIDRs (spec.podCIDRs: 4) (1 of 3 Nodes have none") {
		t.Errorf("note %q", stderr)
	}
	peers, stderr = deploy("--pod-cidr", "10.244.0.0/16,10.244.7.0/24")
	if want := "0.0.0.0/0 except 10.244.0.0/16; ::/0 except "; peers != want || stderr != "" {
		t.Errorf("--pod-cidr: peers %q, want %q; stderr %q", peers, want, stderr)
	}

	r := kubectl(t, cp, "slices", "deploy", "--webhook", "--server", "https://127.0.0.1:1", "-o", "json").mustCode(t, 0)
	if !strings.Contains(r.Stderr, "every address (the Nodes could not be read: ") || !strings.Contains(r.Stderr, "--pod-cidr CIDR") ||
		!strings.Contains(r.Stdout, `"::/0"`) || strings.Contains(r.Stdout, `"except"`) {
		t.Errorf("offline: stderr %q", r.Stderr)
	}
	r = kubectl(t, cp, "slices", "deploy", "--webhook", "--pod-cidr", "10.244.0.0/16", "--webhook-source", "192.0.2.0/24")
	if r.Code != 2 || r.Stdout != "" || !strings.Contains(r.Stderr, "--pod-cidr goes without --webhook-source") {
		t.Errorf("--pod-cidr with --webhook-source: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// webhookPeers are the webhook rule's ipBlocks: "CIDR except A,B; ...".
func webhookPeers(t testing.TB, np unstructured.Unstructured) string {
	t.Helper()
	rules, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
	from, _, _ := unstructured.NestedSlice(rules[0].(map[string]any), "from")
	var out []string
	for _, f := range from {
		cidr, _, _ := unstructured.NestedString(f.(map[string]any), "ipBlock", "cidr")
		except, _, _ := unstructured.NestedStringSlice(f.(map[string]any), "ipBlock", "except")
		out = append(out, cidr+" except "+strings.Join(except, ","))
	}
	return strings.Join(out, "; ")
}
