package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

const controllerManagedBy = "endpointslice-controller.k8s.io"

// The Endpoints controller's mark needs --force as the slice controllers'
// values do: sync --with-endpoints --managed-by endpoint-controller, one-shot
// or --watch, exits 2 before writing anything, and leaves the controller's
// own Endpoints object byte-identical; with --force it writes.
func TestEndpointsControllerMarkNeedsForce(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 61))
	handEndpoints(t, shared, ns, "web", map[string]string{endpointsManagedByLabel: "endpoint-controller"})
	before := endpointsRaw(t, shared, ns, "web")
	for _, args := range [][]string{
		{"sync", "svc/web", "-n", ns, "--with-endpoints", "--managed-by", "endpoint-controller"},
		{"sync", "--all", "-n", ns, "--watch", "--with-endpoints", "--managed-by", "endpoint-controller"},
	} {
		r := slices(t, args...).mustCode(t, 2)
		if !strings.Contains(r.Stderr, `refusing to write under managed-by "endpoint-controller": kube-controller-manager's Endpoints controller owns that value`) {
			t.Errorf("%v: stderr %q", args, r.Stderr)
		}
		if after := endpointsRaw(t, shared, ns, "web"); after != before {
			t.Fatalf("%v rewrote the Endpoints controller's object:\n%s\n->\n%s", args, before, after)
		}
		if v := allSliceVersions(t, shared, ns); len(v) != 0 {
			t.Fatalf("%v wrote slices: %v", args, v)
		}
	}
	slices(t, "sync", "svc/web", "-n", ns, "--with-endpoints", "--managed-by", "endpoint-controller", "--force").mustCode(t, 0)
	if after := endpointsRaw(t, shared, ns, "web"); after == before || !strings.Contains(after, "10.61.0.1") {
		t.Errorf("--force did not write the Endpoints object: %s", after)
	}
}

// A selectorless Service mirrored under the EndpointSlice controller's value
// (sync --force writes the mirroring controller's value on its mirrored
// slices), then given a selector: check flags the mirrored slice left over,
// with the command that repairs it under the value checked, and the next
// sync deletes it, as upstream's mirroring controller does: one-shot and
// --watch alike. Only the Pod's slice is left.
func TestMirroredSlicesGoWhenSelectorAdded(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		ns, name := mirroredThenSelected(t)
		// check under our value: the leftover is not ours, a delete by hand
		// repairs it; under the controller's value, a sync does.
		left := listSlices(t, shared, ns, name, mirroringManagedBy)
		if len(left) != 1 {
			t.Fatalf("%d mirrored slices before the second sync, want 1", len(left))
		}
		for managedBy, command := range map[string]string{
			"kubectl-slices":    "kubectl delete endpointslice " + left[0].Name + " -n " + ns,
			controllerManagedBy: "kubectl slices sync svc/" + name + " -n " + ns + " --managed-by " + controllerManagedBy + " --force",
		} {
			if got := orphanedCommands(t, ns, managedBy); got != command {
				t.Errorf("check --managed-by %s: Orphaned finding %q, want %q", managedBy, got, command)
			}
		}
		slices(t, "sync", "svc/"+name, "-n", ns, "--managed-by", controllerManagedBy, "--force").mustCode(t, 0)
		wantOnlyPod(t, ns, name)
		if got := orphanedCommands(t, ns, controllerManagedBy); got != "" {
			t.Errorf("check after the sync still finds %q", got)
		}
	})
	t.Run("watch", func(t *testing.T) {
		ns := newNamespace(t, shared)
		w := startWatch(t, shared, shared.Kubeconfig, "sync", "--all", "-n", ns, "--watch", "--managed-by", controllerManagedBy, "--force", "--summary-interval=0")
		mustService(t, shared, service(ns, "ext", func(s *corev1.Service) { s.Spec.Selector = nil }))
		handEndpoints(t, shared, ns, "ext", nil)
		// Mirrored addresses are named as addresses, not Pods.
		w.waitLine(t, "service "+ns+"/ext: created 1 slice: address 10.99.0.1 added", 30*time.Second)
		mustPods(t, shared, ns, podSpec("ext", 0, 62))
		editService(t, shared, ns, "ext", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "ext"} })
		within(t, "the watch to delete the mirrored slice", 30*time.Second, func() bool {
			return len(listSlices(t, shared, ns, "ext", mirroringManagedBy)) == 0 && len(listSlices(t, shared, ns, "ext", controllerManagedBy)) == 1
		})
		wantOnlyPod(t, ns, "ext")
		if strings.Contains(w.output(), "pod 10.99.0.1") {
			t.Errorf("the log names a mirrored address as a Pod:\n%s", w.output())
		}
		if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Errorf("watch exited %d", code)
		}
	})
}

// mirroredThenSelected makes a selectorless Service with an Endpoints
// object, syncs it under the EndpointSlice controller's value, then gives
// it a selector matching one Pod.
func mirroredThenSelected(t *testing.T) (ns, name string) {
	t.Helper()
	ns, name = newNamespace(t, shared), "ext"
	mustService(t, shared, service(ns, name, func(s *corev1.Service) { s.Spec.Selector = nil }))
	handEndpoints(t, shared, ns, name, nil)
	slices(t, "sync", "svc/"+name, "-n", ns, "--managed-by", controllerManagedBy, "--force").mustCode(t, 0)
	if got := endpointAddresses(listSlices(t, shared, ns, name, mirroringManagedBy)); fmt.Sprint(got) != "[10.99.0.1]" {
		t.Fatalf("mirrored under %s: %v", mirroringManagedBy, got)
	}
	mustPods(t, shared, ns, podSpec(name, 0, 63))
	editService(t, shared, ns, name, func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": name} })
	return ns, name
}

// wantOnlyPod: the Service's slices, of every manager, publish its Pod's
// address alone.
func wantOnlyPod(t *testing.T, ns, name string) {
	t.Helper()
	all := listSlices(t, shared, ns, name, "")
	if got := endpointAddresses(all); len(all) != 1 || all[0].Labels["endpointslice.kubernetes.io/managed-by"] != controllerManagedBy || len(got) != 1 || strings.HasPrefix(got[0], "10.99.") {
		t.Fatalf("slices of %s/%s: %d, addresses %v; want the Pod's alone, under %s", ns, name, len(all), got, controllerManagedBy)
	}
}

// orphanedCommands runs check under managedBy and returns the commands of
// its Orphaned findings about the mirroring controller's value.
func orphanedCommands(t *testing.T, ns, managedBy string) string {
	t.Helper()
	r := slices(t, "check", "-n", ns, "-o", "json", "--managed-by", managedBy)
	var report struct {
		Findings []struct {
			Kind, Command string
			ManagedBy     []string
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("check: %v (exit %d)\n%s%s", err, r.Code, r.Stdout, r.Stderr)
	}
	var out []string
	for _, f := range report.Findings {
		if f.Kind == "Orphaned" && fmt.Sprint(f.ManagedBy) == "["+mirroringManagedBy+"]" {
			out = append(out, f.Command)
		}
	}
	return strings.Join(out, "; ")
}
