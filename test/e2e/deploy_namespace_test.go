package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The namespace-mode manifests hold nothing cluster-scoped, and the loop
// runs on their Role alone (no cluster-scoped right at all): it converges a
// broken Service of the namespace and says that zones are unknown.
func TestDeployNamespaceScoped(t *testing.T) {
	ns := newNamespace(t, shared)
	objs := deployObjects(t, shared, "--namespace-scoped", "-n", ns)
	for _, o := range objs {
		if o.GetNamespace() != ns {
			t.Fatalf("%s %s is not in namespace %s", o.GetKind(), o.GetName(), ns)
		}
	}
	kubectl(t, shared, "apply", "-f", manifestFile(t, ofKinds(objs, rbacKinds...))).mustCode(t, 0)
	kubeconfig := tokenKubeconfig(t, shared, ns, "kubectl-slices")
	for _, probe := range [][]string{{"get", "nodes"}, {"get", "pods", "-n", "default"}, {"get", "clusterroles"}} {
		if r := kubectl(t, shared, append(probe, "--kubeconfig", kubeconfig)...); r.Code == 0 {
			t.Fatalf("the namespace identity may %v; the test proves nothing", probe)
		}
	}

	mustService(t, shared, service(ns, "web"))
	var want []string
	for i := range 3 {
		s := podSpec("web", i, 44)
		mustPods(t, shared, ns, s)
		want = append(want, s.IPs[0]+":true:") // no Nodes: no zones
	}
	sort.Strings(want)
	w := startWatch(t, shared, kubeconfig, append(loopArgs(t, shared, objs), "--summary-interval=0")...)
	within(t, "the Service converges on the namespace Role", 15*time.Second, func() bool {
		return endpointState(t, shared, ns, "web") == strings.Join(want, " ")
	})
	w.waitLine(t, "(cannot list nodes)", time.Second)
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d:\n%s", code, w.output())
	}
	if out := w.output(); strings.Contains(out, "forbidden") || strings.Contains(out, "error") {
		t.Errorf("errors on the namespace Role:\n%s", out)
	}
	// The loop elected on its own Lease; the namespace's other Leases
	// (another application's leader election) are out of its reach.
	for _, verb := range []string{"get", "update"} {
		if canI(t, shared, ns, "kubectl-slices", verb, "other-app") || !canI(t, shared, ns, "kubectl-slices", verb, "kubectl-slices") {
			t.Errorf("the namespace-scoped loop's %s on Leases is not pinned to its own", verb)
		}
	}

	kubectl(t, shared, "apply", "--dry-run=server", "-f", manifestFile(t, objs)).mustCode(t, 0)
	kubectl(t, shared, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted").mustCode(t, 0)
	checkRestricted(t, shared, ns, objs)
}

// The sidecar mode's RBAC passes server-side dry-run, and its patch, applied
// with kubectl patch --dry-run=server, adds the loop's container beside the
// workload's own and runs the workload as the bound ServiceAccount.
func TestDeploySidecar(t *testing.T) {
	ns := newNamespace(t, shared)
	kubectl(t, shared, "create", "deployment", "web", "-n", ns, "--image", "registry.example/web:1").mustCode(t, 0)
	// Completion offers the namespace's Deployments from the API server.
	r := kubectl(t, shared, "__complete", "slices", "deploy", "-n", ns, "--sidecar-for", "deploy/").mustCode(t, 0)
	if got := completions(r.Stdout); fmt.Sprint(got) != "[deploy/web]" {
		t.Errorf("--sidecar-for deploy/ completes %v", got)
	}
	objs := deployObjects(t, shared, "--sidecar-for", "deploy/web", "-n", ns)
	kinds := fmt.Sprint(kindsOf(objs))
	if kinds != "[ServiceAccount Role RoleBinding]" {
		t.Fatalf("sidecar objects %s", kinds)
	}
	kubectl(t, shared, "apply", "-f", manifestFile(t, objs)).mustCode(t, 0)
	waitAccess(t, shared, ns, "kubectl-slices", "create", "coordination.k8s.io", "leases", ns, true)
	if canI(t, shared, ns, "kubectl-slices", "update", "other-app") || !canI(t, shared, ns, "kubectl-slices", "update", "kubectl-slices") {
		t.Error("the sidecar's Lease update is not pinned to its own Lease")
	}
	patch := kubectl(t, shared, "slices", "deploy", "--sidecar-for", "deploy/web", "-n", ns, "--patch").mustCode(t, 0).Stdout
	r = kubectl(t, shared, "patch", "deployment", "web", "-n", ns, "--type", "strategic", "-p", patch, "--dry-run=server", "-o", "json").mustCode(t, 0)
	var d unstructured.Unstructured
	if err := json.Unmarshal([]byte(r.Stdout), &d.Object); err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
	var names []string
	for _, c := range containers {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	sort.Strings(names) // strategic merge puts the patch's containers first
	if fmt.Sprint(names) != "[kubectl-slices web]" || sa != "kubectl-slices" {
		t.Errorf("patched: containers %v, serviceAccountName %q", names, sa)
	}
	// Only the loop's container mounts the loop's token.
	automount, found, _ := unstructured.NestedBool(d.Object, "spec", "template", "spec", "automountServiceAccountToken")
	var mounts []string
	for _, c := range containers {
		ms, _, _ := unstructured.NestedSlice(c.(map[string]any), "volumeMounts")
		for _, m := range ms {
			mounts = append(mounts, c.(map[string]any)["name"].(string)+":"+m.(map[string]any)["mountPath"].(string))
		}
	}
	if !found || automount || fmt.Sprint(mounts) != "[kubectl-slices:/var/run/secrets/kubernetes.io/serviceaccount]" {
		t.Errorf("patched: automount %v (set %v), token mounts %v", automount, found, mounts)
	}
	// A workload whose Pods share a process namespace could read the
	// loop's token through /proc: refused, nothing printed.
	kubectl(t, shared, "create", "deployment", "shared", "-n", ns, "--image", "registry.example/web:1").mustCode(t, 0)
	kubectl(t, shared, "patch", "deployment", "shared", "-n", ns, "-p", `{"spec":{"template":{"spec":{"shareProcessNamespace":true}}}}`).mustCode(t, 0)
	r = kubectl(t, shared, "slices", "deploy", "--sidecar-for", "deploy/shared", "-n", ns, "--patch").mustCode(t, 2)
	if r.Stdout != "" || !strings.Contains(r.Stderr, "deployment/shared sets shareProcessNamespace") {
		t.Errorf("a workload sharing its process namespace: stdout %q, stderr %q", r.Stdout, r.Stderr)
	}
	// The printed next step names the same patch.
	hint := kubectl(t, shared, "slices", "deploy", "--sidecar-for", "deploy/web", "-n", ns).Stderr
	if !strings.Contains(hint, "kubectl patch deployment web -n "+ns+" --type strategic") {
		t.Errorf("no patch command on stderr: %q", hint)
	}
}

func kindsOf(objs []unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind())
	}
	return out
}
