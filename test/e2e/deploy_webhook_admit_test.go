package e2e

import (
	"context"
	"encoding/base64"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The ValidatingWebhookConfigurations `deploy --webhook` prints, not a
// hand-written copy, work with the webhook server: only their clientConfig
// is pointed at a local `kubectl slices webhook`, everything else (rules,
// objectSelector, matchConditions, failure policies) is as printed. A
// Service typo gets a warning; an admin's hand edit of our slice is refused
// and the same admin's sync writes; with the webhook down, hand edits are
// still refused while the loop's own ServiceAccount, matched out by the
// not-the-loop condition, keeps writing.
func TestDeployWebhookConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	const loopNS, sa = "kubectl-slices", "kubectl-slices"
	objs := deployObjects(t, cp, "--webhook")
	kubectl(t, cp, "apply", "-f", manifestFile(t, ofKinds(objs, rbacKinds...))).mustCode(t, 0)
	loop := tokenKubeconfig(t, cp, loopNS, sa)

	ns := newNamespace(t, cp)
	mustPods(t, cp, ns, podSpec("web", 0, 8), podSpec("web", 1, 8))
	mustService(t, cp, service(ns, "web"))
	dir := t.TempDir()
	ca := writeServingCert(t, dir)
	addr := freeAddr(t)
	w := startWatch(t, cp, cp.Kubeconfig, "webhook", "--webhook-addr", addr, "--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key",
		"--allow-group", "system:masters") // the admin's sync writes; its hand edits are refused
	w.waitLine(t, "caches filled", 30*time.Second)

	cfgs := ofKinds(objs, "ValidatingWebhookConfiguration")
	if len(cfgs) != 2 {
		t.Fatalf("%d ValidatingWebhookConfigurations", len(cfgs))
	}
	for _, o := range cfgs {
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		for _, h := range hooks {
			h := h.(map[string]any)
			path, _, _ := unstructured.NestedString(h, "clientConfig", "service", "path")
			h["clientConfig"] = map[string]any{"url": "https://" + addr + path, "caBundle": base64.StdEncoding.EncodeToString(ca)}
		}
		if err := unstructured.SetNestedSlice(o.Object, hooks, "webhooks"); err != nil {
			t.Fatal(err)
		}
	}
	kubectl(t, cp, "apply", "-f", manifestFile(t, cfgs)).mustCode(t, 0)

	within(t, "a warning for a selector typo", 20*time.Second, func() bool {
		return strings.Contains(applyYAML(t, cp, serviceYAML(ns, "typo", "app: Web", "http"), "--dry-run=server").Stderr, "Warning: kubectl-slices")
	})
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
	ours := listSlices(t, cp, ns, "web", "kubectl-slices")
	if len(ours) != 1 {
		t.Fatalf("%d slices of ours after the admin's sync", len(ours))
	}
	within(t, "an admin's label of our slice refused", 20*time.Second, func() bool {
		r := kubectl(t, cp, "label", "endpointslice", ours[0].Name, "-n", ns, "touched=yes")
		return r.Code != 0 && strings.Contains(r.Stderr, "is managed by kubectl-slices")
	})

	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("webhook exit code %d:\n%s", code, w.output())
	}
	r := kubectl(t, cp, "label", "endpointslice", ours[0].Name, "-n", ns, "touched=yes")
	if r.Code == 0 || !strings.Contains(r.Stderr, "failed calling webhook") {
		t.Fatalf("a hand edit got through with the webhook down: code %d\n%s", r.Code, r.Stderr)
	}
	mustPods(t, cp, ns, podSpec("web", 2, 8))
	code, out := runBounded(t, cp, loop, 30*time.Second, "sync", "svc/web", "-n", ns)
	if code != 0 {
		t.Fatalf("the loop's ServiceAccount could not write with the webhook down: exit %d\n%s", code, out)
	}
	if got := endpointAddresses(listSlices(t, cp, ns, "web", "kubectl-slices")); len(got) != 3 {
		t.Fatalf("after the loop's sync: %v", got)
	}
}
