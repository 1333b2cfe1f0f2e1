package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// registerPrinted applies the ValidatingWebhookConfigurations of objs (as
// `deploy --webhook` printed them) with only their clientConfig pointed at
// a local webhook on addr.
func registerPrinted(t testing.TB, cp *controlplane.ControlPlane, objs []unstructured.Unstructured, addr string, ca []byte) {
	t.Helper()
	cfgs := ofKinds(objs, "ValidatingWebhookConfiguration")
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
}

// startCollector runs kube-controller-manager with the garbage collector,
// the namespace controller and the EndpointSlice controller, each with its
// own ServiceAccount's credentials (--use-service-account-credentials, as
// kubeadm runs it): the collector writes as
// system:serviceaccount:kube-system:generic-garbage-collector, an identity
// no flag of the webhook names. It returns once the collector collects.
func startCollector(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane) {
	t.Helper()
	if err := cp.StartControllersWith(ctx, []string{"--use-service-account-credentials=true"},
		"garbage-collector-controller", "namespace-controller", "endpointslice-controller"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.StopControllerManager)
	ns := newNamespace(t, cp)
	cms := cp.Admin.CoreV1().ConfigMaps(ns)
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "dependent", OwnerReferences: []metav1.OwnerReference{ref}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, "the garbage collector at work", 90*time.Second, func() bool {
		_, err := cms.Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

// timedDelete runs kubectl delete (which waits until the object is gone)
// and fails unless it finished within limit.
func timedDelete(t *testing.T, cp *controlplane.ControlPlane, limit time.Duration, args ...string) {
	t.Helper()
	start := time.Now()
	r := kubectl(t, cp, append([]string{"delete", "--timeout", (limit + 5*time.Second).String()}, args...)...)
	took := time.Since(start)
	if r.Code != 0 || took > limit {
		t.Fatalf("kubectl delete %s: exit %d after %v, want 0 within %v\n%s%s", strings.Join(args, " "), r.Code, took.Round(time.Millisecond), limit, r.Stdout, r.Stderr)
	}
	t.Logf("kubectl delete %s: %v", strings.Join(args, " "), took.Round(time.Millisecond))
}

// With the webhook registered as `deploy --webhook` prints it, the garbage
// collector finishes its work on our slices and the controller's (it may
// change ownerReferences and remove finalizers, whoever it runs as), a
// namespace holding our slices deletes, a tenant cannot forge a slice
// under the EndpointSlice controller's value, and the controller's own
// writes pass, with the webhook up or down.
func TestDeployWebhookCollector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	objs := deployObjects(t, cp, "--webhook")

	ns, gone := newNamespace(t, cp), newNamespace(t, cp)
	mustPods(t, cp, ns, podSpec("orphan", 0, 8), podSpec("fg", 0, 9), podSpec("ctl", 0, 10), podSpec("ctl", 1, 10))
	mustPods(t, cp, gone, podSpec("web", 0, 11))
	for _, s := range []*corev1.Service{service(ns, "orphan"), service(ns, "fg"), service(ns, "ctl"), service(gone, "web")} {
		mustService(t, cp, s)
	}
	kubectl(t, cp, "slices", "sync", "svc/orphan", "svc/fg", "-n", ns).mustCode(t, 0)
	kubectl(t, cp, "slices", "sync", "svc/web", "-n", gone).mustCode(t, 0)
	ours := listSlices(t, cp, ns, "orphan", "kubectl-slices")
	if len(ours) != 1 || len(ours[0].OwnerReferences) != 1 {
		t.Fatalf("our slices of svc/orphan: %+v", ours)
	}
	// Pods bound to Nodes without a kubelet never finish a graceful
	// deletion: gone's go now, its slices of ours stay.
	kubectl(t, cp, "delete", "pods", "--all", "-n", gone, "--grace-period=0", "--force").mustCode(t, 0)
	// Started after our syncs: sync writes nothing where the controller
	// already publishes the Service.
	startCollector(t, ctx, cp)

	dir := t.TempDir()
	ca := writeServingCert(t, dir)
	addr := freeAddr(t)
	w := startWatch(t, cp, cp.Kubeconfig, "webhook", "--webhook-addr", addr, "--tls-cert-file", dir+"/tls.crt", "--tls-private-key-file", dir+"/tls.key")
	w.waitLine(t, "caches filled", 30*time.Second)
	registerPrinted(t, cp, objs, addr, ca)
	within(t, "a hand edit of our slice refused", 20*time.Second, func() bool {
		r := kubectl(t, cp, "label", "endpointslice", ours[0].Name, "-n", ns, "touched=yes")
		return r.Code != 0 && strings.Contains(r.Stderr, "is managed by kubectl-slices")
	})
	within(t, "the controller's slices of svc/ctl", 20*time.Second, func() bool {
		return len(endpointAddresses(listSlices(t, cp, ns, "ctl", "endpointslice-controller.k8s.io"))) == 2
	})

	t.Run("cascade=orphan", func(t *testing.T) {
		ctrl := listSlices(t, cp, ns, "orphan", "endpointslice-controller.k8s.io")
		timedDelete(t, cp, 10*time.Second, "svc", "orphan", "-n", ns, "--cascade=orphan")
		for _, s := range append(listSlices(t, cp, ns, "orphan", "kubectl-slices"), ctrl...) {
			got, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).Get(ctx, s.Name, metav1.GetOptions{})
			if err != nil || len(got.OwnerReferences) != 0 {
				t.Errorf("slice %s after the orphaning: %v, owners %v", s.Name, err, got.OwnerReferences)
			}
		}
	})
	t.Run("cascade=foreground", func(t *testing.T) {
		fg := listSlices(t, cp, ns, "fg", "kubectl-slices")
		if len(fg) != 1 {
			t.Fatalf("%d slices of ours for svc/fg", len(fg))
		}
		timedDelete(t, cp, 10*time.Second, "endpointslice", fg[0].Name, "-n", ns, "--cascade=foreground")
	})
	t.Run("namespace", func(t *testing.T) {
		if n := len(listSlices(t, cp, gone, "web", "kubectl-slices")); n != 1 {
			t.Fatalf("%d slices of ours in %s", n, gone)
		}
		timedDelete(t, cp, 60*time.Second, "namespace", gone)
	})
	t.Run("forged controller slice", func(t *testing.T) {
		forgedControllerSliceIsRefused(t, ctx, cp, ns, ours)
	})
	// The collector only removes or unblocks ownerReferences: a tenant
	// adding a second Service's reference, to the controller's slice or
	// ours, is judged as any other write, and refused.
	t.Run("added ownerReference", func(t *testing.T) {
		addedOwnerReferenceIsRefused(t, ctx, cp, ns)
	})
	t.Run("the controller writes", func(t *testing.T) {
		mustPods(t, cp, ns, podSpec("ctl", 2, 10))
		within(t, "the controller's update with the webhook up", 10*time.Second, func() bool {
			return len(endpointAddresses(listSlices(t, cp, ns, "ctl", "endpointslice-controller.k8s.io"))) == 3
		})
		if code, _ := w.stop(t, syscall.SIGTERM); code != 0 {
			t.Fatalf("webhook exit code %d:\n%s", code, w.output())
		}
		mustPods(t, cp, ns, podSpec("ctl", 3, 10))
		within(t, "the controller's update with the webhook down", 10*time.Second, func() bool {
			return len(endpointAddresses(listSlices(t, cp, ns, "ctl", "endpointslice-controller.k8s.io"))) == 4
		})
		var writers []string
		for _, s := range listSlices(t, cp, ns, "ctl", "endpointslice-controller.k8s.io") {
			for _, e := range s.ManagedFields {
				writers = append(writers, e.Manager)
			}
		}
		if fmt.Sprint(writers) != "[kube-controller-manager]" {
			t.Errorf("the controller's slices were written by %v", writers)
		}
	})
}

// forgedControllerSliceIsRefused: a tenant allowed to create slices may not
// create one under kube-controller-manager's value, whatever its field
// manager; under a value of its own it may.
func forgedControllerSliceIsRefused(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, ns string, ours []discovery.EndpointSlice) {
	tenant := roleUser(t, cp, ns, "tenant", []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"create"}}})
	waitAccess(t, cp, ns, "tenant", "create", "discovery.k8s.io", "endpointslices", ns, true)
	forged := ours[0].DeepCopy()
	forged.ObjectMeta = metav1.ObjectMeta{Name: "forged", Namespace: ns, Labels: map[string]string{
		discovery.LabelManagedBy: "endpointslice-controller.k8s.io", discovery.LabelServiceName: "ctl"}}
	forged.TypeMeta = metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"}
	b, err := yaml.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	r := kubectl(t, cp, "--kubeconfig", tenant, "create", "-f", writeFile(t, "forged.yaml", string(b)), "--field-manager", "kube-controller-manager")
	if r.Code == 0 || !strings.Contains(r.Stderr, "only kube-controller-manager writes") || !strings.Contains(r.Stderr, "system:serviceaccount:"+ns+":tenant is not one of them") {
		t.Fatalf("the forged create: exit %d\n%s", r.Code, r.Stderr)
	}
	if _, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).Get(ctx, "forged", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the forged slice exists: %v", err)
	}
	// The same slice under a value of the tenant's own is its to write.
	forged.Labels[discovery.LabelManagedBy] = "tenant-tool"
	b, _ = yaml.Marshal(forged)
	kubectl(t, cp, "--kubeconfig", tenant, "create", "-f", writeFile(t, "own.yaml", string(b))).mustCode(t, 0)
}

// addedOwnerReferenceIsRefused: a tenant adding a second Service's
// ownerReference to the controller's slice or ours is refused, and the
// slice keeps its owners.
func addedOwnerReferenceIsRefused(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, ns string) {
	other, err := cp.Admin.CoreV1().Services(ns).Get(ctx, "fg", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := "owner-tenant"
	tenant := roleUser(t, cp, ns, owner, []rbacv1.PolicyRule{{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "patch", "update"}}})
	waitAccess(t, cp, ns, owner, "patch", "discovery.k8s.io", "endpointslices", ns, true)
	ref := fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","name":"fg","uid":%q}`, other.UID)
	ctrl := listSlices(t, cp, ns, "ctl", "endpointslice-controller.k8s.io")[0]
	oursLeft := listSlices(t, cp, ns, "orphan", "kubectl-slices")[0]
	for _, target := range []*discovery.EndpointSlice{&ctrl, &oursLeft} {
		refs := []string{ref}
		for _, o := range target.OwnerReferences {
			b, _ := json.Marshal(o)
			refs = append([]string{string(b)}, refs...)
		}
		patch := `{"metadata":{"ownerReferences":[` + strings.Join(refs, ",") + `]}}`
		r := kubectl(t, cp, "--kubeconfig", tenant, "patch", "endpointslice", target.Name, "-n", ns, "--type=merge", "-p", patch)
		if r.Code == 0 || !strings.Contains(r.Stderr, "system:serviceaccount:"+ns+":"+owner+" is not one of them") {
			t.Errorf("adding an ownerReference to %s (%s): exit %d\n%s", target.Name, target.Labels[discovery.LabelManagedBy], r.Code, r.Stderr)
		}
		got, err := cp.Admin.DiscoveryV1().EndpointSlices(ns).Get(ctx, target.Name, metav1.GetOptions{})
		if err != nil || len(got.OwnerReferences) != len(target.OwnerReferences) {
			t.Errorf("slice %s after the refused patch: %v, owners %v", target.Name, err, got.OwnerReferences)
		}
	}
}

// Without the webhook, check flags a slice under the controller's value
// whose managedFields name another writer, and says it is a hint: one
// written with kube-controller-manager's field manager, a name any client
// may send, passes.
func TestCheckForeignWriter(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 74))
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	ours := listSlices(t, shared, ns, "web", oursLabel)[0]
	forged := ours.DeepCopy()
	forged.ObjectMeta = metav1.ObjectMeta{Name: "web-forged", Namespace: ns, Labels: map[string]string{
		discovery.LabelManagedBy: controllerLabel, discovery.LabelServiceName: "web"}}
	forged.TypeMeta = metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"}
	b, err := yaml.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	kubectl(t, shared, "create", "-f", writeFile(t, "forged.yaml", string(b))).mustCode(t, 0)
	copySlice(t, shared, ours, "web-claimed", controllerLabel, nil)

	r := slices(t, "check", "-n", ns, "-o", "json").mustCode(t, 1)
	var report struct {
		Findings []struct {
			Service, Kind, Message, Command string
			Slices                          []string
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	var foreign []string
	for _, f := range report.Findings {
		if f.Kind != "ForeignWriter" {
			continue
		}
		foreign = append(foreign, f.Service+" "+strings.Join(f.Slices, ","))
		if !strings.Contains(f.Message, "web-forged: kubectl-create") || !strings.Contains(f.Message, "proves nothing") ||
			f.Command != "kubectl delete endpointslice -n "+ns+" web-forged" {
			t.Errorf("finding %+v", f)
		}
	}
	if fmt.Sprint(foreign) != "[web web-forged]" {
		t.Errorf("ForeignWriter findings %v, want [web web-forged]\n%s", foreign, r.Stdout)
	}
	if r := slices(t, "check", "-n", ns).mustCode(t, 1); !containsLine(r.Stdout, ns, "web", "ForeignWriter") {
		t.Errorf("the table lacks the finding:\n%s", r.Stdout)
	}
}
