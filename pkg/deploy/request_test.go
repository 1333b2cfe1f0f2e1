package deploy

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/monitoring"
)

func noCheck([]string, []string) error { return nil }

func TestRequestValidate(t *testing.T) {
	ok := Request{Namespace: "ops", Image: "img", Replicas: 2, HealthPort: 8080}
	with := func(f func(*Request)) Request { r := ok; f(&r); return r }
	cases := []struct {
		name string
		r    Request
		want string // "" accepted
	}{
		{"cluster", ok, ""},
		{"namespace", with(func(r *Request) { r.NamespaceScoped = true }), ""},
		{"sidecar", with(func(r *Request) { r.SidecarFor, r.Patch, r.ServiceAccount = "deploy/web", true, "web" }), ""},
		{"webhook", with(func(r *Request) { r.Webhook, r.CertManager, r.Allowed.Users = true, true, []string{"alice"} }), ""},
		{"sidecar and namespace", with(func(r *Request) { r.SidecarFor, r.NamespaceScoped = "deploy/web", true }), "drop --namespace-scoped"},
		{"patch alone", with(func(r *Request) { r.Patch = true }), "--patch and --service-account go with --sidecar-for"},
		{"service account alone", with(func(r *Request) { r.ServiceAccount = "web" }), "--patch and --service-account go with --sidecar-for"},
		{"webhook in a namespace", with(func(r *Request) { r.Webhook, r.NamespaceScoped = true, true }), "cluster mode only"},
		{"webhook in a sidecar", with(func(r *Request) { r.Webhook, r.SidecarFor = true, "deploy/web" }), "cluster mode only"},
		{"cert-manager alone", with(func(r *Request) { r.CertManager = true }), "--cert-manager goes with --webhook"},
		{"allowed alone", with(func(r *Request) { r.Allowed.Groups = []string{"system:masters"} }), "go with --webhook"},
		{"sources alone", with(func(r *Request) { r.WebhookSources = []string{"10.0.0.0/24"} }), "--webhook-source goes with --webhook"},
		{"source not a CIDR", with(func(r *Request) { r.Webhook, r.WebhookSources = true, []string{"10.0.0.1"} }), `--webhook-source "10.0.0.1" is not a CIDR`},
		{"pod CIDRs alone", with(func(r *Request) { r.PodCIDRs = []string{"10.244.0.0/16"} }), "--pod-cidr goes with --webhook"},
		{"pod CIDRs and sources", with(func(r *Request) {
			r.Webhook, r.WebhookSources, r.PodCIDRs = true, []string{"10.0.0.0/24"}, []string{"10.244.0.0/16"}
		}), "--pod-cidr goes without --webhook-source"},
		{"pod CIDR not a CIDR", with(func(r *Request) { r.Webhook, r.PodCIDRs = true, []string{"10.244.0.0"} }), `--pod-cidr "10.244.0.0" is not a CIDR`},
		{"pod CIDR of every address", with(func(r *Request) { r.Webhook, r.PodCIDRs = true, []string{"::/0"} }), `--pod-cidr "::/0" cannot be cut out`},
		{"no replicas", with(func(r *Request) { r.Replicas = 0 }), "--replicas must be at least 1"},
		{"port 0", with(func(r *Request) { r.HealthPort = 0 }), "--health-port must be between 1 and 65535"},
		{"port 65536", with(func(r *Request) { r.HealthPort = 65536 }), "--health-port must be between 1 and 65535"},
		{"no image", with(func(r *Request) { r.Image = "" }), "--image must name an image"},
		{"a pod", with(func(r *Request) { r.SidecarFor = "pod/web" }), "--sidecar-for: "},
		// The first rule broken is the one said.
		{"two faults", with(func(r *Request) { r.CertManager, r.Replicas = true, 0 }), "--cert-manager goes with --webhook"},
	}
	for _, c := range cases {
		err := c.r.Validate(noCheck)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	refused := errors.New("refused")
	r := with(func(r *Request) { r.Webhook, r.Replicas = true, 0 })
	if err := r.Validate(func([]string, []string) error { return refused }); err != refused {
		t.Errorf("the allowed identities' rule comes before the settings: %v", err)
	}
}

func kindList(objs []runtime.Object) string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetObjectKind().GroupVersionKind().Kind)
	}
	return strings.Join(out, ",")
}

func TestRender(t *testing.T) {
	base := Request{Namespace: "ops", Image: "img", Replicas: 2, HealthPort: 8080}
	own := base
	own.OwnNamespace = true
	scoped := own
	scoped.NamespaceScoped = true
	for name, c := range map[string]struct {
		r         Request
		namespace bool
	}{"cluster, own namespace": {own, true}, "cluster, a named namespace": {base, false}, "one namespace": {scoped, false}} {
		out, err := Render(c.r)
		if err != nil {
			t.Fatal(name, err)
		}
		objs := out.Data.([]runtime.Object)
		if got := kindList(objs[:1]) == "Namespace"; got != c.namespace || out.Next != "" {
			t.Errorf("%s: %s; Namespace first %v, want %v; next %q", name, kindList(objs), got, c.namespace, out.Next)
		}
	}
	hook := base
	hook.Webhook = true
	out, err := Render(hook)
	if err != nil {
		t.Fatal(err)
	}
	var secret *corev1.Secret
	for _, o := range out.Data.([]runtime.Object) {
		if s, ok := o.(*corev1.Secret); ok {
			secret = s
		}
	}
	if secret == nil || len(secret.Data[corev1.TLSPrivateKeyKey]) == 0 {
		t.Errorf("--webhook without cert-manager: no generated key in %s", kindList(out.Data.([]runtime.Object)))
	}
	hook.CertManager = true
	if out, _ := Render(hook); !strings.Contains(kindList(out.Data.([]runtime.Object)), "Issuer,Certificate") {
		t.Errorf("--cert-manager: %s", kindList(out.Data.([]runtime.Object)))
	}
}

func TestRenderSidecar(t *testing.T) {
	r := Request{Namespace: "shop", Image: "img", Replicas: 2, HealthPort: 8080, SidecarFor: "deploy/web"}
	out, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Data.([]runtime.Object); !ok {
		t.Errorf("sidecar: %T, want the RBAC objects", out.Data)
	}
	want := "# apply the above (kubectl apply -f -), then add the container to deployment/web:\n" +
		"#   kubectl patch deployment web -n shop --type strategic -p \"$(kubectl slices deploy --sidecar-for deploy/web -n shop --patch)\"\n"
	if out.Next != want {
		t.Errorf("next step %q, want %q", out.Next, want)
	}
	r.Patch = true
	if out, err = Render(r); err != nil || out.Next != "" {
		t.Fatalf("--patch: %v, next %q", err, out.Next)
	}
	if _, ok := out.Data.(map[string]any); !ok {
		t.Errorf("--patch: %T, want the patch", out.Data)
	}
}

// The note on stderr says whom the webhook port admits when no flag named
// it, and the NetworkPolicy cuts out the Nodes' Pod CIDRs unless --pod-cidr
// names others.
func TestRenderSourcesNote(t *testing.T) {
	base := Request{Namespace: "ops", Image: "img", Replicas: 2, HealthPort: 8080, Webhook: true, CertManager: true}
	with := func(f func(*Request)) Request { r := base; f(&r); return r }
	read := &NodePodCIDRs{CIDRs: []string{"10.244.0.0/24", "10.244.1.0/24"}, Nodes: 3, Without: 1}
	for _, c := range []struct {
		name   string
		r      Request
		note   string // "" none
		except string
	}{
		{"sources", with(func(r *Request) { r.WebhookSources, r.Nodes = []string{"192.0.2.0/24"}, read }), "", ""},
		{"pod CIDRs named", with(func(r *Request) { r.PodCIDRs, r.Nodes = []string{"10.0.0.0/8"}, read }), "", "10.0.0.0/8"},
		{"nodes read", with(func(r *Request) { r.Nodes = read }),
			"every address but the Nodes' Pod CIDRs (spec.podCIDRs: 2) (1 of 3 Nodes have none: their Pods are let in); if the network plugin", "10.244.0.0/24,10.244.1.0/24"},
		{"not read", base, "every address (the Nodes were not read): name the cluster's Pod CIDRs with --pod-cidr CIDR", ""},
		{"unreachable", with(func(r *Request) { r.Nodes = &NodePodCIDRs{Err: errors.New("connection refused")} }),
			"every address (the Nodes could not be read: connection refused): name the cluster's Pod CIDRs with --pod-cidr", ""},
		{"no nodes", with(func(r *Request) { r.Nodes = &NodePodCIDRs{} }), "(the cluster has no Nodes)", ""},
		{"no pod CIDRs", with(func(r *Request) { r.Nodes = &NodePodCIDRs{Nodes: 2, Without: 2} }), "(no Node has spec.podCIDRs)", ""},
	} {
		out, err := Render(c.r)
		if err != nil {
			t.Fatal(c.name, err)
		}
		if (c.note == "") != (out.Next == "") || !strings.Contains(out.Next, c.note) {
			t.Errorf("%s: note %q, want %q", c.name, out.Next, c.note)
		}
		objs := out.Data.([]runtime.Object)
		np := objs[len(objs)-1].(*networkingv1.NetworkPolicy)
		if got := strings.Join(np.Spec.Ingress[0].From[0].IPBlock.Except, ","); got != c.except {
			t.Errorf("%s: IPv4 except %q, want %q", c.name, got, c.except)
		}
	}
}

// --monitoring adds a PodMonitor on the Deployment's Pods and metrics port
// (the job named by app.kubernetes.io/name, which the rules select) and a
// PrometheusRule carrying pkg/monitoring's groups; without it nothing of
// prometheus-operator's is printed.
func TestRenderMonitoring(t *testing.T) {
	r := Request{Namespace: "ops", Image: "img", Replicas: 2, HealthPort: 8080}
	plain, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	r.Monitoring = true
	with, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	before, after := plain.Data.([]runtime.Object), with.Data.([]runtime.Object)
	if len(after) != len(before)+2 {
		t.Fatalf("--monitoring: %d objects, want %d", len(after), len(before)+2)
	}
	for _, o := range before {
		if o.GetObjectKind().GroupVersionKind().Group == "monitoring.coreos.com" {
			t.Errorf("without --monitoring: %s printed", o.GetObjectKind().GroupVersionKind().Kind)
		}
	}
	pm := after[len(after)-2].(*unstructured.Unstructured)
	pr := after[len(after)-1].(*unstructured.Unstructured)
	if pm.GetKind() != "PodMonitor" || pr.GetKind() != "PrometheusRule" || pm.GetNamespace() != "ops" || pr.GetNamespace() != "ops" {
		t.Fatalf("got %s/%s and %s/%s", pm.GetKind(), pm.GetNamespace(), pr.GetKind(), pr.GetNamespace())
	}
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	job, _, _ := unstructured.NestedString(pm.Object, "spec", "jobLabel")
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	var dep *appsv1.Deployment
	for _, o := range before {
		if d, ok := o.(*appsv1.Deployment); ok {
			dep = d
		}
	}
	podLabels := dep.Spec.Template.Labels
	for k, v := range sel {
		if podLabels[k] != v {
			t.Errorf("the PodMonitor selects %s=%s; the Pods have %q", k, v, podLabels[k])
		}
	}
	if podLabels[job] != monitoring.Job {
		t.Errorf("the job label %q is %q on the Pods, want %q (the rules' job)", job, podLabels[job], monitoring.Job)
	}
	port := eps[0].(map[string]any)["port"]
	found := false
	for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
		found = found || (p.Name == port && p.ContainerPort == 8080)
	}
	if !found {
		t.Errorf("the PodMonitor scrapes port %v, which the container does not name on 8080", port)
	}
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	want, _ := asJSON(monitoring.Groups())
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("the PrometheusRule's groups differ from pkg/monitoring's")
	}
	r.SidecarFor = "deploy/web"
	if err := r.Validate(noCheck); err == nil || !strings.Contains(err.Error(), "--monitoring") {
		t.Errorf("--monitoring with --sidecar-for: %v", err)
	}
}

// With --verify, a second PodMonitor scrapes the verifier's Pods alone as
// the job the data-plane alerts select; the loop's PodMonitor does not
// scrape them (its job's alerts count the loop's replicas).
func TestRenderMonitoringVerifier(t *testing.T) {
	r := Request{Namespace: "ops", Image: "img", Replicas: 2, HealthPort: 8080, Monitoring: true, Verify: true, VerifyTiers: DefaultTiers}
	out, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]map[string]string{}
	monitors := map[string]*unstructured.Unstructured{}
	for _, o := range out.Data.([]runtime.Object) {
		switch o := o.(type) {
		case *appsv1.Deployment:
			pods[o.Name] = o.Spec.Template.Labels
		case *unstructured.Unstructured:
			if o.GetKind() == "PodMonitor" {
				monitors[o.GetName()] = o
			}
		}
	}
	for monitor, want := range map[string]struct{ pods, job string }{
		Name:         {Name, monitoring.Job},
		VerifierName: {VerifierName, monitoring.VerifyJob},
	} {
		pm := monitors[monitor]
		if pm == nil {
			t.Fatalf("no PodMonitor %s", monitor)
		}
		sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
		job, _, _ := unstructured.NestedString(pm.Object, "spec", "jobLabel")
		for name, podLabels := range pods {
			matches := labels.SelectorFromSet(sel).Matches(labels.Set(podLabels))
			if matches != (name == want.pods) {
				t.Errorf("PodMonitor %s selects Deployment %s's Pods: %v", monitor, name, matches)
			}
		}
		if got := pods[want.pods][job]; got != want.job {
			t.Errorf("PodMonitor %s: job %q, want %q", monitor, got, want.job)
		}
	}
}
