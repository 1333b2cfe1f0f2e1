package cmd

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// The commands' unit tests run each command through cobra against a fake
// clientset and check the exit code the README documents and, where the
// command writes, the end state of the fake cluster against what the
// inputs justify.

const testNS = "shop"

func testService(name string, selector map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.ServiceSpec{
			Selector: selector, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

func testPod(name, ip string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, UID: types.UID("uid-" + name), Labels: labels},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

// webCluster is a Service web selecting two ready Pods, a Pod it does not
// select, and their Node: no slices yet.
func webCluster() []runtime.Object {
	web := map[string]string{"app": "web"}
	return []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: testNS}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}},
		testService("web", web),
		testPod("web-1", "10.0.0.1", web),
		testPod("web-2", "10.0.0.2", web),
		testPod("db-1", "10.0.0.9", map[string]string{"app": "db"}),
	}
}

// selectedIPs are the IPs of the ready Pods a Service selects: what its
// slices must publish.
func selectedIPs(objs []runtime.Object, svc string) []string {
	var sel map[string]string
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok && s.Name == svc {
			sel = s.Spec.Selector
		}
	}
	var ips []string
	for _, o := range objs {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		match := len(sel) > 0
		for k, v := range sel {
			match = match && p.Labels[k] == v
		}
		if match {
			ips = append(ips, p.Status.PodIP)
		}
	}
	sort.Strings(ips)
	return ips
}

// slicesOf lists the slices of a Service held by the fake cluster, by
// managed-by value, with the addresses they publish.
func slicesOf(t *testing.T, client *fake.Clientset, svc string) map[string][]string {
	t.Helper()
	list, err := client.DiscoveryV1().EndpointSlices(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, s := range list.Items {
		if s.Labels[discovery.LabelServiceName] != svc {
			continue
		}
		m := s.Labels[discovery.LabelManagedBy]
		out[m] = append(out[m], []string{}...)
		for _, ep := range s.Endpoints {
			out[m] = append(out[m], ep.Addresses...)
		}
		sort.Strings(out[m])
	}
	return out
}

func sameStrings(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

// refuse makes every verb on resource fail with err.
func refuse(client *fake.Clientset, verb, resource string, err error) {
	client.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
}

// forbidden is the authorizer's refusal, worded as the API server words it.
func forbidden(verb, resource string) error {
	gr := schema.GroupResource{Resource: resource}
	if resource == "endpointslices" {
		gr.Group = discovery.GroupName
	}
	return apierrors.NewForbidden(gr, "", errorString(fmt.Sprintf(`User "dev" cannot %s resource %q in API group %q in the namespace %q`, verb, resource, gr.Group, testNS)))
}

type errorString string

func (e errorString) Error() string { return string(e) }

func mustCode(t *testing.T, r fakeRun, want int) {
	t.Helper()
	if r.Code() != want {
		t.Fatalf("exit %d, want %d; err %v\nstdout:\n%s\nstderr:\n%s", r.Code(), want, r.Err, r.Out, r.ErrOut)
	}
}

// writes counts the create, update, patch and delete requests made.
func writes(client *fake.Clientset) int {
	n := 0
	for _, a := range client.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete", "deletecollection":
			if a.GetResource().Resource != "selfsubjectaccessreviews" {
				n++
			}
		}
	}
	return n
}

func TestSyncCommand(t *testing.T) {
	objs := webCluster()
	want := selectedIPs(objs, "web")

	r := runFake(t, objs, "sync", "svc/web", "-n", testNS)
	mustCode(t, r, exit.OK)
	got := slicesOf(t, r.Client, "web")
	if len(got) != 1 || !sameStrings(got[reconcile.DefaultManagedBy], want) {
		t.Errorf("slices after sync: %v, want only ours publishing %v", got, want)
	}

	// Run again on the same cluster: nothing to write.
	client := r.Client
	before := writes(client)
	mustCode(t, runOn(t, context.Background(), client, "sync", "svc/web", "-n", testNS), exit.OK)
	if n := writes(client) - before; n != 0 {
		t.Errorf("a second sync of an unchanged cluster made %d writes", n)
	}

	r = runFake(t, objs, "sync", "svc/web", "-n", testNS, "--dry-run=client", "-o", "name")
	mustCode(t, r, exit.OK)
	if writes(r.Client) != 0 || len(slicesOf(t, r.Client, "web")) != 0 || !strings.Contains(r.Out, "created (dry run)") {
		t.Errorf("--dry-run=client wrote %d times; stdout %q", writes(r.Client), r.Out)
	}

	mustCode(t, runFake(t, objs, "sync", "svc/nope", "-n", testNS), exit.NotFound)
	// One Service synced, one missing: exit 1, and the one synced.
	r = runFake(t, objs, "sync", "svc/web", "svc/nope", "-n", testNS)
	mustCode(t, r, exit.Changes)
	if got := slicesOf(t, r.Client, "web"); !sameStrings(got[reconcile.DefaultManagedBy], want) {
		t.Errorf("web not synced beside a missing Service: %v", got)
	}

	client = fake.NewClientset(objs...)
	generateNames(client)
	refuse(client, "create", "endpointslices", forbidden("create", "endpointslices"))
	r = runOn(t, context.Background(), client, "sync", "svc/web", "-n", testNS)
	mustCode(t, r, exit.API)
	if !strings.Contains(r.ErrOut, "forbidden: cannot create endpointslices.discovery.k8s.io in namespace shop") || len(slicesOf(t, client, "web")) != 0 {
		t.Errorf("forbidden create: stderr %q", r.ErrOut)
	}

	client = fake.NewClientset(objs...)
	generateNames(client)
	refuse(client, "create", "endpointslices", apierrors.NewConflict(schema.GroupResource{Group: discovery.GroupName, Resource: "endpointslices"}, "", errorString("changed")))
	mustCode(t, runOn(t, context.Background(), client, "sync", "svc/web", "-n", testNS), exit.Conflicts)
}

// Bad input is a usage error (exit 2) found before any request: the fake
// clientset sees none, whatever --dry-run says.
func TestUsageErrorsMakeNoRequest(t *testing.T) {
	cases := [][]string{
		{"sync", "svc/web", "-n", testNS, "--managed-by", "bad value!"},
		{"sync", "svc/web", "-n", testNS, "--managed-by", "bad value!", "--dry-run=client"},
		{"sync", "svc/web", "-n", "BAD NS"},
		{"sync", "svc/..", "-n", testNS},
		{"sync", "svc/a\nb", "-n", testNS},
		{"sync", "svc/web", "-n", testNS, "--batch-period", "1s"},
		{"sync", "svc/web", "-n", testNS, "--summary-interval", "1s"},
		{"sync", "svc/web", "-n", testNS, "--concurrent-syncs", "2"},
		{"sync", "svc/a", "-A", "--watch"},
		{"diff", "svc/web", "-n", testNS, "--managed-by", "bad value!"},
		{"diff", "svc/..", "-n", testNS},
		{"explain", "svc/..", "-n", testNS},
		{"explain", "svc/web", "-n", "BAD NS"},
		{"explain", "svc/web", "-n", testNS, "--managed-by", "bad value!"},
		{"check", "-n", "BAD NS"},
		{"check", "-n", testNS, "--managed-by", "bad value!"},
		{"release", "svc/web", "-n", testNS, "--managed-by", "bad value!"},
		{"release", "svc/web", "-n", testNS, "--wait=never"},
		{"release", "svc/..", "-n", testNS},
		{"prune", "-n", testNS, "--managed-by", "bad value!"},
		{"prune", "-n", "BAD NS", "--dry-run=client"},
		{"prune", "-n", testNS, "--dry-run=later"},
		{"deploy", "--replicas", "0"},
		{"deploy", "-n", "BAD NS", "--namespace-scoped"},
		{"deploy", "--verify-tiers", "rules"},
		{"deploy", "--verify", "--verify-tiers", "healthz,exec"},
		{"deploy", "--verify", "--namespace-scoped", "-n", testNS},
		{"verify", "--all", "-n", testNS, "--watch", "--interval", "1s"},
		{"webhook", "--webhook-addr", ":8443"},
		{"webhook", "--webhook-addr", ":8443", "--tls-cert-file", "c", "--tls-private-key-file", "k", "--managed-by", "bad value!"},
		{"version", "-o", "wide"},
	}
	for _, args := range cases {
		r := runFake(t, webCluster(), args...)
		msg := ""
		if r.Err != nil {
			msg = r.Err.Error()
		}
		if r.Code() != exit.Usage || len(r.Client.Actions()) != 0 || strings.Contains(msg, "\n") {
			t.Errorf("%q: exit %d after %d requests, error %q; want exit 2, no request, one line", args, r.Code(), len(r.Client.Actions()), msg)
		}
	}
}

// A name that is no Service name is quoted, so the error stays one line.
func TestServiceNameQuotedInErrors(t *testing.T) {
	r := runFake(t, nil, "sync", "svc/a\nb", "-n", testNS)
	if r.Code() != exit.Usage || !strings.Contains(r.Err.Error(), `"svc/a\nb"`) || strings.Contains(r.Err.Error(), "\n") {
		t.Errorf("exit %d, error %q", r.Code(), r.Err)
	}
	if got := exit.Describe("ns", "a\nb", apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "a\nb")).Error(); strings.Contains(got, "\n") || !strings.Contains(got, `"a\nb"`) {
		t.Errorf("describe: %q", got)
	}
}

func TestDiffCommand(t *testing.T) {
	objs := webCluster()
	r := runFake(t, objs, "diff", "svc/web", "-n", testNS)
	mustCode(t, r, exit.Changes)
	for _, ip := range selectedIPs(objs, "web") {
		if !strings.Contains(r.Out, ip) {
			t.Errorf("the diff does not add %s:\n%s", ip, r.Out)
		}
	}
	if writes(r.Client) != 0 {
		t.Errorf("diff wrote")
	}
	mustCode(t, runOn(t, context.Background(), r.Client, "sync", "svc/web", "-n", testNS), exit.OK)
	mustCode(t, runOn(t, context.Background(), r.Client, "diff", "svc/web", "-n", testNS), exit.OK)
	mustCode(t, runFake(t, objs, "diff", "svc/nope", "-n", testNS), exit.NotFound)

	client := fake.NewClientset(objs...)
	refuse(client, "list", "pods", forbidden("list", "pods"))
	mustCode(t, runOn(t, context.Background(), client, "diff", "svc/web", "-n", testNS), exit.API)
}

func TestExplainCommand(t *testing.T) {
	objs := webCluster()
	r := runFake(t, objs, "explain", "svc/web", "-n", testNS)
	mustCode(t, r, exit.Changes) // no slices yet: drift
	for _, p := range []string{"web-1", "web-2"} {
		if !strings.Contains(r.Out, p) {
			t.Errorf("explain does not name Pod %s:\n%s", p, r.Out)
		}
	}
	mustCode(t, runOn(t, context.Background(), r.Client, "sync", "svc/web", "-n", testNS), exit.OK)
	r = runOn(t, context.Background(), r.Client, "explain", "svc/web", "-n", testNS, "-o", "json")
	mustCode(t, r, exit.OK)
	if !strings.HasPrefix(r.Out, "{") || !strings.Contains(r.Out, `"10.0.0.1"`) {
		t.Errorf("explain -o json:\n%s", r.Out)
	}
	mustCode(t, runFake(t, objs, "explain", "svc/nope", "-n", testNS), exit.NotFound)
	client := fake.NewClientset(objs...)
	refuse(client, "get", "services", forbidden("get", "services"))
	mustCode(t, runOn(t, context.Background(), client, "explain", "svc/web", "-n", testNS), exit.API)
}

func TestCheckCommand(t *testing.T) {
	objs := webCluster()
	r := runFake(t, objs, "check", "-n", testNS)
	mustCode(t, r, exit.Changes) // web has no slices at all
	if !strings.Contains(r.Out, "NoSlices") {
		t.Errorf("check does not report NoSlices:\n%s", r.Out)
	}
	mustCode(t, runOn(t, context.Background(), r.Client, "sync", "svc/web", "-n", testNS), exit.OK)
	r = runOn(t, context.Background(), r.Client, "check", "-n", testNS, "-o", "yaml")
	mustCode(t, r, exit.OK)
	if writes(r.Client) != 1 { // sync's one create
		t.Errorf("check wrote")
	}
	client := fake.NewClientset(objs...)
	refuse(client, "list", "services", forbidden("list", "services"))
	mustCode(t, runOn(t, context.Background(), client, "check", "-n", testNS), exit.API)
}

func TestReleaseCommand(t *testing.T) {
	objs := webCluster()
	want := selectedIPs(objs, "web")
	client := fake.NewClientset(objs...)
	generateNames(client)
	ctx := context.Background()
	// Ours alone: the controller has not caught up, release refuses.
	mustCode(t, runOn(t, ctx, client, "sync", "svc/web", "-n", testNS), exit.OK)
	r := runOn(t, ctx, client, "release", "svc/web", "-n", testNS)
	mustCode(t, r, exit.Changes)
	if got := slicesOf(t, client, "web"); !sameStrings(got[reconcile.DefaultManagedBy], want) {
		t.Errorf("a refused release changed our slices: %v", got)
	}
	// The controller's slices publish the same: release deletes ours only.
	mustCode(t, runOn(t, ctx, client, "sync", "svc/web", "-n", testNS, "--managed-by", reconcile.ControllerManagedBy, "--force"), exit.OK)
	mustCode(t, runOn(t, ctx, client, "release", "svc/web", "-n", testNS), exit.OK)
	got := slicesOf(t, client, "web")
	if len(got) != 1 || !sameStrings(got[reconcile.ControllerManagedBy], want) {
		t.Errorf("after release: %v, want only the controller's publishing %v", got, want)
	}
	mustCode(t, runFake(t, objs, "release", "svc/nope", "-n", testNS), exit.NotFound)

	client = fake.NewClientset(objs...)
	generateNames(client)
	mustCode(t, runOn(t, ctx, client, "sync", "svc/web", "-n", testNS), exit.OK)
	mustCode(t, runOn(t, ctx, client, "sync", "svc/web", "-n", testNS, "--managed-by", reconcile.ControllerManagedBy, "--force"), exit.OK)
	refuse(client, "delete", "endpointslices", forbidden("delete", "endpointslices"))
	mustCode(t, runOn(t, ctx, client, "release", "svc/web", "-n", testNS), exit.API)
}

func TestPruneCommand(t *testing.T) {
	objs := webCluster()
	client := fake.NewClientset(objs...)
	generateNames(client)
	ctx := context.Background()
	mustCode(t, runOn(t, ctx, client, "sync", "svc/web", "-n", testNS), exit.OK)
	r := runOn(t, ctx, client, "prune", "-n", testNS)
	mustCode(t, r, exit.OK)
	if len(slicesOf(t, client, "web")) != 1 || !strings.Contains(r.Out, "Nothing to prune") {
		t.Errorf("prune deleted the slices of a live Service: %v\n%s", slicesOf(t, client, "web"), r.Out)
	}
	// The Service goes: its slices of ours go with prune.
	if err := client.CoreV1().Services(testNS).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustCode(t, runOn(t, ctx, client, "prune", "-n", testNS, "--dry-run=client"), exit.OK)
	if len(slicesOf(t, client, "web")) != 1 {
		t.Errorf("prune --dry-run=client deleted")
	}
	mustCode(t, runOn(t, ctx, client, "prune", "-n", testNS), exit.OK)
	if got := slicesOf(t, client, "web"); len(got) != 0 {
		t.Errorf("after prune: %v, want none", got)
	}
	client = fake.NewClientset(objs...)
	refuse(client, "list", "endpointslices", forbidden("list", "endpointslices"))
	mustCode(t, runOn(t, ctx, client, "prune", "-n", testNS), exit.API)

	// A slice that keeps changing under the delete: exit 5, and it stays.
	client = fake.NewClientset(objs...)
	generateNames(client)
	mustCode(t, runOn(t, ctx, client, "sync", "svc/web", "-n", testNS), exit.OK)
	if err := client.CoreV1().Services(testNS).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	refuse(client, "delete", "endpointslices", apierrors.NewConflict(schema.GroupResource{Group: discovery.GroupName, Resource: "endpointslices"}, "", errorString("changed")))
	mustCode(t, runOn(t, ctx, client, "prune", "-n", testNS), exit.Conflicts)
	if len(slicesOf(t, client, "web")) != 1 {
		t.Errorf("a conflicting delete went through")
	}
}

func TestDeployCommand(t *testing.T) {
	r := runFake(t, nil, "deploy", "--namespace-scoped", "-n", testNS, "-o", "json")
	mustCode(t, r, exit.OK)
	if len(r.Client.Actions()) != 0 || !strings.Contains(r.Out, `"kind": "List"`) || !strings.Contains(r.Out, `"namespace": "`+testNS+`"`) {
		t.Errorf("deploy made %d requests; stdout:\n%.400s", len(r.Client.Actions()), r.Out)
	}
	r = runFake(t, sharingWorkloads(false), "deploy", "--sidecar-for", "deploy/web", "-n", testNS, "--patch")
	mustCode(t, r, exit.OK)
	mustCode(t, runFake(t, nil, "deploy", "--sidecar-for", "pod/web", "-n", testNS), exit.Usage)
}

func TestVersionCommand(t *testing.T) {
	r := runFake(t, nil, "version", "-o", "json")
	mustCode(t, r, exit.OK)
	if !strings.Contains(r.Out, `"clientVersion"`) || !strings.Contains(r.Out, `"serverVersion"`) {
		t.Errorf("version -o json:\n%s", r.Out)
	}
	client := fake.NewClientset()
	refuse(client, "get", "version", forbidden("get", "version"))
	mustCode(t, runOn(t, context.Background(), client, "version"), exit.API)
	r = runOn(t, context.Background(), client, "version", "--client")
	mustCode(t, r, exit.OK)
	if len(client.Actions()) != 1 {
		t.Errorf("version --client made a request")
	}
}
