package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// TestWebhook runs `kubectl slices webhook` on 127.0.0.1, registered on its
// own control plane (the configuration is cluster-wide), and drives it
// through kubectl: warnings on Services, refused hand edits of our slices,
// the behaviour with the webhook down, certificate rotation, and the same
// webhook served by sync --watch.
func TestWebhook(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := webhookCluster(t, ctx)
	ns := newNamespace(t, cp)
	dir := t.TempDir()
	ca := writeServingCert(t, dir)
	addr := freeAddr(t)
	// The admin (system:masters) is allowed to write our slices with sync:
	// its hand edits are still refused as accidents.
	flags := append([]string{"--webhook-addr", addr, "--tls-cert-file", dir + "/tls.crt", "--tls-private-key-file", dir + "/tls.key", "--allow-group", "system:masters"},
		clientCAFlag(cp)...)

	api := controlplane.PodSpec{Name: "api-2", Labels: map[string]string{"app": "api"}, Node: testNodes[0].Name, Ready: true, IPs: []string{"10.9.0.3"}}
	mustPods(t, cp, ns, podSpec("web", 0, 8), podSpec("web", 1, 8), podSpec("api", 0, 9), podSpec("api", 1, 9), api)

	w := startWatch(t, cp, cp.Kubeconfig, append([]string{"webhook"}, flags...)...)
	w.waitLine(t, "caches filled", 30*time.Second)
	registerWebhook(t, cp, addr, ca)
	typo := serviceYAML(ns, "typo", "app: Web", "http")
	// A server-side dry run of a Service that does not exist goes through
	// admission every time (an unchanged apply sends nothing).
	probe := serviceYAML(ns, "probe", "app: Web", "http")
	// The API server picks the configuration up from its own informer.
	within(t, "the webhook to be called", 20*time.Second, func() bool {
		return strings.Contains(applyYAML(t, cp, probe, "--dry-run=server").Stderr, "Warning: kubectl-slices")
	})

	t.Run("warnings", func(t *testing.T) {
		webhookWarnsOfMistakes(t, cp, ns, typo)
	})

	slices := func() []discovery.EndpointSlice { return listSlices(t, cp, ns, "web", "kubectl-slices") }
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
	ours := slices()
	if len(ours) != 1 {
		t.Fatalf("%d slices of ours after sync", len(ours))
	}
	name := ours[0].Name
	other := copySlice(t, cp, ours[0], "web-by-hand", "someone-else", nil)

	t.Run("guard", func(t *testing.T) {
		webhookGuardsOurSlices(t, cp, ns, name, other, slices)
	})

	t.Run("rotation", func(t *testing.T) {
		before, err := servedCert(addr, ca)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // a distinct modification time
		ca2 := writeServingCert(t, dir)
		within(t, "the rotated certificate to be served", 5*time.Second, func() bool {
			after, err := servedCert(addr, ca2)
			return err == nil && !bytes.Equal(after.Raw, before.Raw)
		})
		w.waitLine(t, "serving certificate loaded", time.Second)
		registerWebhook(t, cp, addr, ca2)
		ca = ca2
		within(t, "the API server to call the rotated webhook", 20*time.Second, func() bool {
			return strings.Contains(applyYAML(t, cp, probe, "--dry-run=server").Stderr, "Warning: kubectl-slices")
		})
	})

	t.Run("webhook down", func(t *testing.T) {
		if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Fatalf("webhook exit code %d:\n%s", code, w.output())
		}
		if !strings.Contains(w.output(), "webhook: stopped;") {
			t.Errorf("no summary line:\n%s", w.output())
		}
		applyYAML(t, cp, serviceYAML(ns, "late", "app: web", "http")).mustCode(t, 0)
		r := kubectl(t, cp, "label", "endpointslice", slices()[0].Name, "-n", ns, "touched=yes")
		if r.Code == 0 || !strings.Contains(r.Stderr, "failed calling webhook") {
			t.Fatalf("a hand edit got through with the webhook down: code %d\n%s", r.Code, r.Stderr)
		}
		kubectl(t, cp, "label", "endpointslice", other.Name, "-n", ns, "touched=again", "--overwrite").mustCode(t, 0)
	})

	t.Run("served by sync --watch", func(t *testing.T) {
		syncWatchServesTheWebhook(t, cp, ns, flags, slices)
	})
	t.Run("field manager", func(t *testing.T) {
		webhookAdmitsTheNamedFieldManager(t, cp, ns, flags, slices)
	})
}

// webhookWarnsOfMistakes: applying a Service whose selector matches no Pods,
// or whose targetPort a Pod does not declare, warns; a correct one does not.
func webhookWarnsOfMistakes(t *testing.T, cp *controlplane.ControlPlane, ns, typo string) {
	r := applyYAML(t, cp, typo).mustCode(t, 0)
	t.Logf("kubectl apply (typo):\n%s", r.Stderr)
	for _, want := range []string{"Warning: kubectl-slices: service typo: selector app=Web matches no Pods", "nearest miss: pod web-0 has app=web"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	r = applyYAML(t, cp, serviceYAML(ns, "api", "app: api", "http")).mustCode(t, 0)
	if !strings.Contains(r.Stderr, `Warning: kubectl-slices: service api: targetPort "http" of port http is not declared by 1 of 3 Pods (api-2)`) {
		t.Errorf("no port warning naming api-2:\n%s", r.Stderr)
	}
	r = applyYAML(t, cp, serviceYAML(ns, "web", "app: web", "http")).mustCode(t, 0)
	if strings.Contains(r.Stderr, "Warning") {
		t.Errorf("a correct Service got a warning:\n%s", r.Stderr)
	}
}

// webhookGuardsOurSlices: hand edits of our slice (label, patch, edit, a
// changed managed-by) are refused and change nothing, while the admin's sync
// writes and someone else's slice stays editable.
func webhookGuardsOurSlices(t *testing.T, cp *controlplane.ControlPlane, ns, name string, other *discovery.EndpointSlice, ourSlices func() []discovery.EndpointSlice) {
	// kubectl edit with an editor that adds a label.
	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/^  labels:$/  labels:\\n    touched: \"yes\"/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", editor)
	t.Setenv("TMPDIR", t.TempDir()) // where kubectl edit keeps the refused edit
	for _, args := range [][]string{
		{"label", "endpointslice", name, "-n", ns, "touched=yes"},
		{"patch", "endpointslice", name, "-n", ns, "--type=merge", "-p", `{"endpoints":[]}`},
		{"edit", "endpointslice", name, "-n", ns},
		{"label", "endpointslice", name, "-n", ns, "--overwrite", "endpointslice.kubernetes.io/managed-by=someone-else"},
	} {
		r := kubectl(t, cp, args...)
		t.Logf("kubectl %s:\n%s", args[0], r.Stderr)
		if r.Code == 0 || !strings.Contains(r.Stderr, "denied the request: endpointslice "+name+" is managed by kubectl-slices") ||
			!strings.Contains(r.Stderr, "kubectl slices release svc/web -n "+ns) {
			t.Errorf("kubectl %s: code %d, stderr:\n%s", args[0], r.Code, r.Stderr)
		}
	}
	if got := ourSlices(); len(got) != 1 || got[0].Labels["touched"] != "" || len(got[0].Endpoints) != 2 {
		t.Fatalf("our slice changed: %+v", got)
	}
	// The same admin's sync writes: a new Pod is published.
	mustPods(t, cp, ns, podSpec("web", 2, 8))
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if got := endpointAddresses(ourSlices()); len(got) != 3 {
		t.Fatalf("sync did not write: %v", got)
	}
	kubectl(t, cp, "label", "endpointslice", other.Name, "-n", ns, "touched=yes").mustCode(t, 0)
	kubectl(t, cp, "delete", "endpointslice", name, "-n", ns).mustCode(t, 0)
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns).mustCode(t, 0)
}

// syncWatchServesTheWebhook: sync --watch with the webhook flags refuses hand
// edits and warns, while its own writes pass.
func syncWatchServesTheWebhook(t *testing.T, cp *controlplane.ControlPlane, ns string, flags []string, ourSlices func() []discovery.EndpointSlice) {
	sw := startWatch(t, cp, cp.Kubeconfig, append([]string{"sync", "--all", "-n", ns, "--watch"}, flags...)...)
	sw.waitLine(t, "webhook: caches filled", 30*time.Second)
	r := kubectl(t, cp, "label", "endpointslice", ourSlices()[0].Name, "-n", ns, "touched=yes")
	if r.Code == 0 || !strings.Contains(r.Stderr, "is managed by kubectl-slices") {
		t.Fatalf("hand edit not refused by sync --watch's webhook: code %d\n%s", r.Code, r.Stderr)
	}
	// The loop's own writes pass: a new Pod gets published.
	mustPods(t, cp, ns, podSpec("web", 3, 8))
	within(t, "the watch loop to publish web-3", 20*time.Second, func() bool { return len(endpointAddresses(ourSlices())) == 4 })
	if r := applyYAML(t, cp, serviceYAML(ns, "typo2", "app: Web", "http")); !strings.Contains(r.Stderr, "nearest miss: pod web-0 has app=web") {
		t.Errorf("no warning from sync --watch's webhook:\n%s", r.Stderr)
	}
	if code, _ := sw.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("sync --watch exit code %d:\n%s", code, sw.output())
	}
}

// webhookAdmitsTheNamedFieldManager: a webhook started with --field-manager
// admits that sync's writes and refuses the default field manager's.
func webhookAdmitsTheNamedFieldManager(t *testing.T, cp *controlplane.ControlPlane, ns string, flags []string, ourSlices func() []discovery.EndpointSlice) {
	// A team whose sync runs with its own --field-manager names it to
	// the webhook: that sync writes, the default one is refused.
	fw := startWatch(t, cp, cp.Kubeconfig, append([]string{"webhook", "--field-manager", "ops-sync"}, flags...)...)
	fw.waitLine(t, "caches filled", 30*time.Second)
	mustPods(t, cp, ns, podSpec("web", 4, 8))
	within(t, "the default field manager refused", 20*time.Second, func() bool {
		r := kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns)
		return r.Code == 4 && strings.Contains(r.Stderr, "denied the request: endpointslice") &&
			strings.Contains(r.Stderr, "field manager kubectl-slices")
	})
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", ns, "--field-manager", "ops-sync").mustCode(t, 0)
	if got := endpointAddresses(ourSlices()); len(got) != 5 {
		t.Fatalf("the ops-sync sync did not write: %v", got)
	}
	if code, _ := fw.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("webhook exit code %d:\n%s", code, fw.output())
	}
}
