package deploy

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

func opts(scope Scope) Options {
	return Options{Namespace: "ops", Image: "registry.example/ks:v1", Replicas: 2, Scope: scope, HealthPort: 8080, CreateNamespace: true}
}

func kinds(t *testing.T, objs []runtime.Object) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		out = append(out, o.GetObjectKind().GroupVersionKind().Kind)
	}
	return out
}

// rulesOf returns the rules and why-annotations of every role in objs.
func rulesOf(t *testing.T, objs []runtime.Object) (map[string][]rbacv1.PolicyRule, map[string]map[string]string) {
	t.Helper()
	rules, why := map[string][]rbacv1.PolicyRule{}, map[string]map[string]string{}
	for _, o := range objs {
		m, _ := apimeta.Accessor(o)
		switch r := o.(type) {
		case *rbacv1.ClusterRole:
			rules["ClusterRole/"+m.GetName()] = r.Rules
		case *rbacv1.Role:
			rules["Role/"+m.GetName()] = r.Rules
		default:
			continue
		}
		why[o.GetObjectKind().GroupVersionKind().Kind+"/"+m.GetName()] = m.GetAnnotations()
	}
	return rules, why
}

// Every verb of every rule is explained in the role's annotations, and
// every explained verb is granted: the reasons and the rules agree.
func TestEveryVerbHasAReason(t *testing.T) {
	for _, scope := range []Scope{Cluster, Namespace, -1} {
		var objs []runtime.Object
		var err error
		if scope == -1 { // with the webhook
			objs, err = Objects(opts(Cluster))
			if err == nil {
				objs, err = WithWebhook(objs, opts(Cluster), TLS{CertManager: true}, Allowed{})
			}
		} else {
			objs, err = Objects(opts(scope))
		}
		if err != nil {
			t.Fatal(err)
		}
		rules, why := rulesOf(t, objs)
		if len(rules) == 0 {
			t.Fatal("no roles")
		}
		for role, rs := range rules {
			explained := map[string]bool{}
			for _, r := range rs {
				key := WhyKey(r.APIGroups[0], r.Resources[0])
				text := why[role][WhyAnnotationPrefix+key]
				for _, v := range r.Verbs {
					if !regexp.MustCompile(`(^|; )` + v + `: \S`).MatchString(text) {
						t.Errorf("%s: %s on %s has no reason (%q)", role, v, key, text)
					}
				}
				explained[key] = true
			}
			if len(explained) != len(why[role]) {
				t.Errorf("%s: %d resources, %d annotations", role, len(explained), len(why[role]))
			}
		}
	}
}

func grants(rules map[string][]rbacv1.PolicyRule, role, resource, verb string) bool {
	for _, r := range rules[role] {
		if slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func TestClusterMode(t *testing.T) {
	objs, err := Objects(opts(Cluster))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment", "PodDisruptionBudget"}
	if got := kinds(t, objs); !reflect.DeepEqual(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	rules, _ := rulesOf(t, objs)
	if !grants(rules, "ClusterRole/kubectl-slices", "nodes", "watch") || !grants(rules, "ClusterRole/kubectl-slices", "endpointslices", "delete") {
		t.Error("the ClusterRole misses Nodes or slice writes")
	}
	if grants(rules, "ClusterRole/kubectl-slices", "leases", "update") {
		t.Error("the Lease is granted cluster-wide")
	}
	if !grants(rules, "Role/kubectl-slices-leader-election", "leases", "update") || len(rules["Role/kubectl-slices-leader-election"]) != 2 {
		t.Errorf("the leader-election Role: %v", rules["Role/kubectl-slices-leader-election"])
	}
	d := objs[6].(*appsv1.Deployment)
	args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " ")
	if args != "sync --watch --standby --all -A --leader-elect --leader-elect-resource-name kubectl-slices --leader-elect-resource-namespace ops --health-addr=:8080" {
		t.Errorf("args %q", args)
	}
	if *d.Spec.Replicas != 2 {
		t.Errorf("replicas %d", *d.Spec.Replicas)
	}
}

// Namespace mode creates nothing cluster-scoped and grants no Nodes.
func TestNamespaceMode(t *testing.T) {
	o := opts(Namespace)
	o.Replicas = 1
	objs, err := Objects(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ServiceAccount", "Role", "RoleBinding", "Deployment"} // no PDB for one replica
	if got := kinds(t, objs); !reflect.DeepEqual(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	rules, _ := rulesOf(t, objs)
	if grants(rules, "Role/kubectl-slices", "nodes", "list") {
		t.Error("nodes in a namespace Role")
	}
	if !grants(rules, "Role/kubectl-slices", "leases", "create") || !grants(rules, "Role/kubectl-slices", "endpointslices", "create") {
		t.Error("the Role misses the Lease or slice writes")
	}
	args := objs[3].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "-n") || slices.Contains(args, "-A") {
		t.Errorf("args %v", args)
	}
}

// Every mode grants get and update on the loop's own Lease only, the one
// its arguments elect on; create stays unpinned (RBAC cannot pin it).
func TestLeasePinned(t *testing.T) {
	sc, _ := SidecarObjects(SidecarOptions{Namespace: "shop", Workload: Workload{"deployment", "web"}, Image: "i", HealthPort: 9090})
	cl, _ := Objects(opts(Cluster))
	nsm, _ := Objects(opts(Namespace))
	for name, objs := range map[string][]runtime.Object{"cluster": cl, "namespace": nsm, "sidecar": sc} {
		rules, _ := rulesOf(t, objs)
		seen := map[string]bool{}
		for role, rs := range rules {
			for _, r := range rs {
				if !slices.Contains(r.Resources, "leases") {
					continue
				}
				if role == "ClusterRole/kubectl-slices" {
					t.Errorf("%s: Leases in the ClusterRole", name)
				}
				for _, v := range r.Verbs {
					seen[v] = true
					pinned := reflect.DeepEqual(r.ResourceNames, []string{LeaseName})
					if v == "create" && len(r.ResourceNames) != 0 {
						t.Errorf("%s: create pinned to %v: RBAC would refuse every create", name, r.ResourceNames)
					}
					if v != "create" && !pinned {
						t.Errorf("%s: %s on Leases %v, want only %s", name, v, r.ResourceNames, LeaseName)
					}
				}
			}
		}
		if len(seen) != 3 || !seen["get"] || !seen["update"] || !seen["create"] {
			t.Errorf("%s: Lease verbs %v", name, seen)
		}
	}
	p, _ := SidecarPatch(SidecarOptions{Namespace: "shop", Workload: Workload{"deployment", "web"}, Image: "i", HealthPort: 9090})
	args := fmt.Sprint(p["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["args"])
	for _, a := range []string{args, strings.Join(Args("ops", Cluster, 1), " "), strings.Join(Args("ops", Namespace, 1), " ")} {
		if !strings.Contains(a, "--leader-elect-resource-name "+LeaseName+" ") {
			t.Errorf("args %s do not elect on %s", a, LeaseName)
		}
	}
}

func TestSidecar(t *testing.T) {
	w, err := ParseWorkload("deployment.apps/web")
	if err != nil || w != (Workload{"deployment", "web"}) {
		t.Fatalf("%v %v", w, err)
	}
	for _, bad := range []string{"web", "pod/web", "deploy/", "deploy/a/b"} {
		if _, err := ParseWorkload(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	o := SidecarOptions{Namespace: "shop", Workload: w, Image: "i", HealthPort: 9090}
	objs, _ := SidecarObjects(o)
	if got := kinds(t, objs); !reflect.DeepEqual(got, []string{"ServiceAccount", "Role", "RoleBinding"}) {
		t.Errorf("kinds %v", got)
	}
	p, _ := SidecarPatch(o)
	pod := patchedPod(t, p)
	if pod.ServiceAccountName != Name || len(pod.Containers) != 1 || pod.Containers[0].Name != Name {
		t.Errorf("patch %+v", pod)
	}
	// Only the loop's container holds the loop's token: the Pod's
	// automount is off, and the container mounts a projected token, CA
	// bundle and namespace where in-cluster configuration reads them.
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken || len(pod.Volumes) != 1 {
		t.Fatalf("the workload's containers would mount the loop's token: automount %v, volumes %+v", pod.AutomountServiceAccountToken, pod.Volumes)
	}
	mounts, vol := pod.Containers[0].VolumeMounts, pod.Volumes[0]
	if len(mounts) != 1 || mounts[0].Name != vol.Name || mounts[0].MountPath != "/var/run/secrets/kubernetes.io/serviceaccount" || !mounts[0].ReadOnly {
		t.Errorf("the sidecar mounts %+v", mounts)
	}
	files := map[string]bool{}
	for _, src := range vol.Projected.Sources {
		switch {
		case src.ServiceAccountToken != nil:
			files[src.ServiceAccountToken.Path] = src.ServiceAccountToken.Audience == ""
		case src.ConfigMap != nil:
			files[src.ConfigMap.Items[0].Path] = src.ConfigMap.Name == "kube-root-ca.crt" && src.ConfigMap.Items[0].Key == "ca.crt"
		case src.DownwardAPI != nil:
			files[src.DownwardAPI.Items[0].Path] = src.DownwardAPI.Items[0].FieldRef.FieldPath == "metadata.namespace"
		}
	}
	if fmt.Sprint(files) != "map[ca.crt:true namespace:true token:true]" {
		t.Errorf("projected files %v", files)
	}
	o.ServiceAccount = "web"
	objs, _ = SidecarObjects(o)
	if kinds(t, objs)[0] == "ServiceAccount" || objs[1].(*rbacv1.RoleBinding).Subjects[0].Name != "web" {
		t.Error("the workload's ServiceAccount is not the one bound")
	}
	p, _ = SidecarPatch(o)
	if pod := patchedPod(t, p); pod.ServiceAccountName != "" || pod.AutomountServiceAccountToken != nil || len(pod.Volumes) != 0 || len(pod.Containers[0].VolumeMounts) != 0 {
		t.Errorf("the patch changes the workload's ServiceAccount or its token: %+v", pod)
	}
}

// patchedPod reads a sidecar patch's pod template spec back as a PodSpec.
func patchedPod(t *testing.T, p map[string]any) corev1.PodSpec {
	t.Helper()
	var pod corev1.PodSpec
	raw := p["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

// The image the Dockerfile builds is what the manifests run: a static
// binary named as the container's command, as the non-root user the pod
// security context names.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	stages := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(df, -1)
	if len(stages) < 2 {
		t.Fatalf("not multi-stage: %v", stages)
	}
	final := stages[len(stages)-1][1]
	if !strings.HasPrefix(final, "gcr.io/distroless/static") && final != "scratch" {
		t.Errorf("final stage %s is neither distroless static nor scratch", final)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "hack/build-tags", "pkg/cmd.Version=${VERSION}"} {
		if !strings.Contains(df, want) {
			t.Errorf("the build lacks %s", want)
		}
	}
	users := regexp.MustCompile(`(?m)^USER (\S+)`).FindAllStringSubmatch(df, -1)
	uid := PodSecurityContext().RunAsUser
	if len(users) == 0 || users[len(users)-1][1] != "65532:65532" || *uid != 65532 {
		t.Errorf("USER %v, pod runs as %d", users, *uid)
	}
	cmd := Container("i", nil, 1).Command[0]
	if !strings.Contains(df, `ENTRYPOINT ["`+cmd+`"]`) || !strings.Contains(df, "/usr/local/bin/"+cmd) {
		t.Errorf("the image does not install %s on PATH as its entrypoint", cmd)
	}
}

func TestValidate(t *testing.T) {
	for _, o := range []Options{{Image: "i", Replicas: 1, HealthPort: 1}, {Namespace: "n", Replicas: 1, HealthPort: 1},
		{Namespace: "n", Image: "i", HealthPort: 1}, {Namespace: "n", Image: "i", Replicas: 1}} {
		if _, err := Objects(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
