package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The cluster-mode RBAC of `deploy`, applied as printed, is enough for
// sync --watch -A run with a TokenRequest token of its ServiceAccount; and
// every verb on every resource is needed: without it the loop stops at
// start-up naming the verb and the resource, or (Nodes, Endpoints: it can
// work without them) says what it runs without.
func TestDeployClusterRBAC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	const ns, sa = "kubectl-slices", "kubectl-slices"
	objs := deployObjects(t, cp)
	kubectl(t, cp, "apply", "-f", manifestFile(t, ofKinds(objs, rbacKinds...))).mustCode(t, 0)
	kubeconfig := tokenKubeconfig(t, cp, ns, sa)

	// A broken Service: no controller runs here, so it has no slices.
	app := newNamespace(t, cp)
	mustService(t, cp, service(app, "web"))
	var want []string
	for i := range 3 {
		s := podSpec("web", i, 43)
		mustPods(t, cp, app, s)
		want = append(want, fmt.Sprintf("%s:true:%s", s.IPs[0], testNodes[i%len(testNodes)].Zone))
	}
	sort.Strings(want)
	w := startWatch(t, cp, kubeconfig, append(loopArgs(t, cp, objs), "--summary-interval=0")...)
	within(t, "the Service converges as the ServiceAccount", 15*time.Second, func() bool {
		return endpointState(t, cp, app, "web") == strings.Join(want, " ")
	})
	if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d:\n%s", code, w.output())
	}
	if out := w.output(); strings.Contains(out, "not readable") || strings.Contains(out, "forbidden") {
		t.Errorf("with every rule the loop still lacks a right:\n%s", out)
	}

	// The whole output passes the API server's validation and admission,
	// and the pod spec its PodSecurity admission in the namespace deploy
	// labels restricted.
	kubectl(t, cp, "apply", "--dry-run=server", "-f", manifestFile(t, objs)).mustCode(t, 0)
	checkRestricted(t, cp, ns, objs)
	// With the webhook: its Service, Secret and registrations validate
	// (CEL match conditions included); cert-manager's kinds are not
	// installed here, so only the rest of that variant is checked.
	kubectl(t, cp, "apply", "--dry-run=server", "-f", manifestFile(t, deployObjects(t, cp, "--webhook"))).mustCode(t, 0)
	cm := deployObjects(t, cp, "--webhook", "--cert-manager")
	if n := len(ofKinds(cm, "Issuer", "Certificate")); n != 2 {
		t.Errorf("--cert-manager: %d Issuer and Certificate objects", n)
	}
	kubectl(t, cp, "apply", "--dry-run=server", "-f", manifestFile(t, ofKinds(cm, "Service", "ValidatingWebhookConfiguration", "Deployment"))).mustCode(t, 0)

	// One verb removed at a time.
	orig, err := cp.Admin.RbacV1().ClusterRoles().Get(ctx, "kubectl-slices", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for i, rule := range orig.Rules {
		resource := rule.Resources[0]
		for _, verb := range rule.Verbs {
			tested++
			t.Run(verb+"-"+resource, func(t *testing.T) {
				loopNamesTheMissingRight(t, ctx, cp, ns, sa, kubeconfig, orig, i, rule, verb)
			})
		}
	}
	if tested != 18 {
		t.Errorf("%d rights tested, want 18 (services 3, pods 2, endpointslices 5, endpoints 3, nodes 3, events 2)", tested)
	}

	// The Lease Role grants get and update on the loop's Lease alone (the
	// one the loop above elected on), create unpinned (RBAC cannot pin
	// it): another application's Lease in the namespace is out of reach.
	lease, err := cp.Admin.RbacV1().Roles(ns).Get(ctx, "kubectl-slices-leader-election", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lease.Rules) != 2 {
		t.Fatalf("Lease Role rules %+v: want get and update on kubectl-slices, and create", lease.Rules)
	}
	if _, err := cp.Admin.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other-app", Namespace: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	leaseRoleReachesOnlyOurLease(t, cp, ns, sa, kubeconfig)

	// One verb removed at a time: leader election stops at start-up
	// naming it (client-go's elector would retry for ever).
	for i, rule := range lease.Rules {
		name := ""
		if len(rule.ResourceNames) > 0 {
			name = rule.ResourceNames[0]
		}
		for _, verb := range rule.Verbs {
			t.Run(verb+"-leases", func(t *testing.T) {
				leaderElectionNamesTheMissingRight(t, ctx, cp, ns, sa, kubeconfig, lease, i, rule, verb, name)
			})
		}
	}
}

// loopNamesTheMissingRight: with verb removed from the ClusterRole's rule i,
// the loop says which right it lacks: it runs on without an optional input,
// and stops with exit code 4 without a required one.
func loopNamesTheMissingRight(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, ns, sa, kubeconfig string, orig *rbacv1.ClusterRole, i int, rule rbacv1.PolicyRule, verb string) {
	group, resource := rule.APIGroups[0], rule.Resources[0]
	cut := orig.DeepCopy()
	cut.Rules[i].Verbs = nil
	for _, v := range rule.Verbs {
		if v != verb {
			cut.Rules[i].Verbs = append(cut.Rules[i].Verbs, v)
		}
	}
	setRules(t, ctx, cp, cut.Rules)
	defer func() {
		setRules(t, ctx, cp, orig.Rules)
		waitAccess(t, cp, ns, sa, verb, group, resource, "", true)
	}()
	waitAccess(t, cp, ns, sa, verb, group, resource, "", false)
	denied := verb + " " + resource
	switch resource {
	case "nodes", "endpoints", "events":
		// Optional inputs (and Events, which the recorder would
		// drop): the loop runs and says which right it lacks.
		w := startWatch(t, cp, kubeconfig, "sync", "--watch", "--all", "-A", "--summary-interval=0")
		w.waitLine(t, "(cannot "+denied+")", 10*time.Second)
		w.waitLine(t, "caches filled", 10*time.Second) // running, not starting
		if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Errorf("exit %d", code)
		}
	default:
		code, out := runBounded(t, cp, kubeconfig, 10*time.Second, "sync", "--watch", "--all", "-A")
		t.Logf("exit %d: %s", code, strings.TrimSpace(out))
		if code != 4 || !strings.Contains(out, "forbidden: cannot "+denied) || !strings.Contains(out, "kubectl slices deploy") {
			t.Errorf("without %s: exit %d, output:\n%s", denied, code, out)
		}
	}
}

// leaseRoleReachesOnlyOurLease: the ServiceAccount may get and update its
// own Lease, not another application's in the namespace, by the authorizer
// and by an update with its token.
func leaseRoleReachesOnlyOurLease(t *testing.T, cp *controlplane.ControlPlane, ns, sa, kubeconfig string) {
	for _, verb := range []string{"get", "update"} {
		if canI(t, cp, ns, sa, verb, "other-app") || !canI(t, cp, ns, sa, verb, "kubectl-slices") {
			t.Errorf("%s: the loop may %s other-app: %v, its own Lease: %v", verb, verb,
				canI(t, cp, ns, sa, verb, "other-app"), canI(t, cp, ns, sa, verb, "kubectl-slices"))
		}
	}
	// The same as updates (PUT, kubectl replace) with the ServiceAccount's
	// token.
	replace := func(name string) result {
		f := writeFile(t, name+".json", kubectl(t, cp, "get", "lease", name, "-n", ns, "-o", "json").mustCode(t, 0).Stdout)
		return kubectl(t, cp, "--kubeconfig", kubeconfig, "replace", "-f", f)
	}
	if r := replace("other-app"); r.Code == 0 || !strings.Contains(r.Stderr, `cannot update resource "leases"`) {
		t.Errorf("the loop's identity updated another application's Lease: code %d\n%s", r.Code, r.Stderr)
	}
	replace("kubectl-slices").mustCode(t, 0)
}

// leaderElectionNamesTheMissingRight: with verb removed from the Lease Role's
// rule i, leader election stops at start-up with exit code 4 naming it.
func leaderElectionNamesTheMissingRight(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, ns, sa, kubeconfig string, lease *rbacv1.Role, i int, rule rbacv1.PolicyRule, verb, name string) {
	cut := lease.DeepCopy()
	cut.Rules[i].Verbs = nil
	for _, v := range rule.Verbs {
		if v != verb {
			cut.Rules[i].Verbs = append(cut.Rules[i].Verbs, v)
		}
	}
	if len(cut.Rules[i].Verbs) == 0 {
		cut.Rules = append(cut.Rules[:i:i], cut.Rules[i+1:]...)
	}
	setRole(t, ctx, cp, cut)
	defer func() {
		setRole(t, ctx, cp, lease)
		within(t, verb+" leases granted again", 10*time.Second, func() bool { return canI(t, cp, ns, sa, verb, name) })
	}()
	within(t, verb+" leases refused", 10*time.Second, func() bool { return !canI(t, cp, ns, sa, verb, name) })
	code, out := runBounded(t, cp, kubeconfig, 10*time.Second, "sync", "--watch", "--all", "-A", "--leader-elect", "--leader-elect-resource-namespace", ns)
	t.Logf("exit %d: %s", code, strings.TrimSpace(out))
	if want := "forbidden: cannot " + verb + " leases.coordination.k8s.io in namespace " + ns; code != 4 || !strings.Contains(out, want) {
		t.Errorf("without %s leases: exit %d, output:\n%s", verb, code, out)
	}
}

// canI asks the API server's authorizer whether the ServiceAccount may
// verb the Lease name ("" for any) in its namespace.
func canI(t *testing.T, cp *controlplane.ControlPlane, ns, sa, verb, name string) bool {
	t.Helper()
	r, err := cp.Admin.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: "system:serviceaccount:" + ns + ":" + sa,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Name: name}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Status.Allowed
}

// setRole replaces the rules of a Role with those of role.
func setRole(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, role *rbacv1.Role) {
	t.Helper()
	live, err := cp.Admin.RbacV1().Roles(role.Namespace).Get(ctx, role.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Rules = role.Rules
	if _, err := cp.Admin.RbacV1().Roles(role.Namespace).Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setRules replaces the rules of deploy's ClusterRole.
func setRules(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, rules []rbacv1.PolicyRule) {
	t.Helper()
	role, err := cp.Admin.RbacV1().ClusterRoles().Get(ctx, "kubectl-slices", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = rules
	if _, err := cp.Admin.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
