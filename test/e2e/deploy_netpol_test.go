package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
