package e2e

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// Every bad input gets one clear line naming the object and what to do, its
// documented exit code, and nothing written.
func TestSyncErrors(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 5))

	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		// Not "-A": a named Service is refused across all namespaces.
		{"service not found", []string{"sync", "svc/nope", "-n", ns}, 3, "service " + ns + "/nope not found: check the name and the namespace (-n NAMESPACE; kubectl get services -A lists every namespace's)"},
		{"not a Service", []string{"sync", "deploy/web", "-n", ns}, 2, "deploy/web is not a Service"},
		{"invalid selector", []string{"sync", "-l", "app==web=x", "-n", ns}, 2, `invalid selector "app==web=x"`},
		{"max endpoints too low", []string{"sync", "svc/web", "-n", ns, "--max-endpoints-per-slice=0"}, 2, "--max-endpoints-per-slice must be between 1 and 1000, got 0"},
		{"max endpoints too high", []string{"sync", "svc/web", "-n", ns, "--max-endpoints-per-slice=1001"}, 2, "between 1 and 1000, got 1001"},
		{"unknown dry-run", []string{"sync", "svc/web", "-n", ns, "--dry-run=maybe"}, 2, `--dry-run must be "none", "client" or "server", got "maybe"`},
		{"unknown output", []string{"sync", "svc/web", "-n", ns, "-o", "wide"}, 2, `-o must be json, yaml or name, got "wide"`},
		{"controller's managed-by", []string{"sync", "svc/web", "-n", ns, "--managed-by", "endpointslice-controller.k8s.io"}, 2, "would fight kubectl-slices"},
		{"cluster unreachable", []string{"sync", "svc/web", "-n", ns, "--server", "https://127.0.0.1:1", "--request-timeout", "5s"}, 4, "cannot reach the API server at 127.0.0.1:1: connection refused"},
		{"diff of a missing Service", []string{"diff", "svc/nope", "-n", ns}, 3, "service " + ns + "/nope not found"},
		{"unknown flag", []string{"sync", "svc/web", "--frobnicate"}, 2, "unknown flag: --frobnicate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := slices(t, c.args...).mustCode(t, c.code)
			line := strings.TrimSpace(r.Stderr)
			if !strings.HasPrefix(line, "error: ") || !strings.Contains(line, c.want) {
				t.Errorf("stderr %q, want an error line containing %q", line, c.want)
			}
			if n := len(allSliceVersions(t, shared, ns)); n != 0 {
				t.Errorf("%d slices written", n)
			}
		})
	}
}

// Forbidden names the verb and resource that are missing, for the harness's
// limited user.
func TestSyncForbidden(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 6))
	ctx := context.Background()

	// With no rights at all, even reading the Service is refused.
	r := slices(t, "sync", "svc/web", "-n", ns, "--context", controlplane.LimitedContext).mustCode(t, 4)
	if !strings.Contains(r.Stderr, "cannot get services in namespace "+ns) {
		t.Errorf("stderr: %q", r.Stderr)
	}

	// Allowed to read but not to write slices.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"services", "pods"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list"}},
	}}
	if _, err := shared.Admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "read", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "read"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: controlplane.LimitedUser}}}
	if _, err := shared.Admin.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r = slices(t, "sync", "svc/web", "-n", ns, "--context", controlplane.LimitedContext).mustCode(t, 4)
	want := "cannot create endpointslices.discovery.k8s.io in namespace " + ns
	if !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q, want %q", r.Stderr, want)
	}
	// Nodes are cluster-scoped and unreadable to this user: the plan still
	// works, says so once, and diff shows the change and exits 1.
	r = slices(t, "diff", "svc/web", "-n", ns, "--context", controlplane.LimitedContext).mustCode(t, 1)
	if strings.Count(r.Stderr, "the Nodes could not be read") != 1 || !strings.Contains(r.Stdout, "10.6.0.1") {
		t.Errorf("diff as the limited user: stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	if n := len(allSliceVersions(t, shared, ns)); n != 0 {
		t.Errorf("%d slices written", n)
	}
}

// A namespace being deleted accepts no new slices.
func TestSyncNamespaceTerminating(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 7))
	// No namespace controller runs, so the namespace stays Terminating.
	if err := shared.Admin.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 4)
	if !strings.Contains(r.Stderr, "namespace "+ns+" is terminating") {
		t.Errorf("stderr: %q", r.Stderr)
	}
	if n := len(allSliceVersions(t, shared, ns)); n != 0 {
		t.Errorf("%d slices written", n)
	}
}
