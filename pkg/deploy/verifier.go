package deploy

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/monitoring"
)

// VerifierName names the verifier's objects (deploy --verify): its own
// ServiceAccount, roles and Deployment, apart from the writer's.
const VerifierName = Name + "-verify"

// The verify tiers, least privilege first (pkg/verify/verdict's names).
const (
	TierHealthz = "healthz"
	TierMetrics = "metrics"
	TierRules   = "rules"
)

// Tiers are the tiers in order; DefaultTiers the least that still finds a
// stale kube-proxy (its /healthz fails once a change has waited past its
// health timeout).
var (
	Tiers        = []string{TierHealthz, TierMetrics, TierRules}
	DefaultTiers = []string{TierHealthz}
)

// systemNamespace holds kube-proxy's and CoreDNS's Pods.
const systemNamespace = "kube-system"

// VerifierRights is every call `verify --watch` makes, verb by verb; the
// tiers' rights only for the tiers chosen. It writes nothing but Events.
var VerifierRights = []Right{
	{Resource: "services", Verb: "list", Why: "pkg/cluster Cache.Informers: the Service informer (the Services verified)"},
	{Resource: "services", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Service informer's watch (a change is verified a sync period later)"},
	{Resource: "pods", Verb: "list", Why: "pkg/cluster Cache.Informers: the Pod informer (each Service planned as sync would); pkg/verify/probe finds the kube-proxy and CoreDNS Pods"},
	{Resource: "pods", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Pod informer's watch"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "list", Why: "pkg/cluster Cache.Informers: the EndpointSlice informer (what each node should program)"},
	{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "watch", Why: "pkg/cluster Cache.Informers: the EndpointSlice informer's watch"},
	{Resource: "endpoints", Verb: "list", Why: "pkg/cluster Cache.Informers: the Endpoints informer (selectorless Services are planned by mirroring them, Cache.EndpointsOf)"},
	{Resource: "endpoints", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Endpoints informer's watch"},
	{Resource: "endpoints", Verb: "get", Why: "pkg/cluster Cache.EndpointsOf reads whole an Endpoints object a controller wrote (cached emptied) once its Service lost its selector"},
	{Resource: "nodes", Verb: "list", Why: "pkg/cluster Cache.Informers: the Node informer (the nodes verified, their zones)"},
	{Resource: "nodes", Verb: "watch", Why: "pkg/cluster Cache.Informers: the Node informer's watch"},
	{Resource: "events", Verb: "create", In: metav1.NamespaceDefault, Why: "pkg/daemon verify.go: DataPlaneDrift and DataPlaneRecovered on a Node (a cluster-scoped object's Events are kept in default)"},
	{Resource: "events", Verb: "patch", In: metav1.NamespaceDefault, Why: "client-go tools/record: a repeated Event is counted by patching it"},
	{Resource: "events", Verb: "create", In: systemNamespace, Why: "pkg/daemon verify.go: DataPlaneDrift and DataPlaneRecovered on a CoreDNS Pod"},
	{Resource: "events", Verb: "patch", In: systemNamespace, Why: "client-go tools/record: a repeated Event is counted by patching it"},
	{Resource: "configmaps", Verb: "get", In: systemNamespace, ResourceNames: []string{"coredns"}, Why: "pkg/verify/probe corefileTiming: the Corefile's cache, the window in which a replica may serve an older answer"},
	{Resource: "pods/proxy", Verb: "get", In: systemNamespace, Tier: TierHealthz, Why: "pkg/verify/probe: kube-proxy's /healthz and its health check node ports, through the API server"},
	{Resource: "pods/portforward", Verb: "create", In: systemNamespace, Tier: TierMetrics, Why: "pkg/verify/probe: kube-proxy's metrics on 127.0.0.1:10249, and the CoreDNS replicas on TCP 53"},
	{Resource: "pods/exec", Verb: "create", In: systemNamespace, Tier: TierRules, Why: "pkg/verify/proxyread: nft and iptables listings in the kube-proxy container (root on the node: it reads every rule the node holds)"},
}

// ParseTiers reads --verify-tiers: a comma-separated list of tiers.
func ParseTiers(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(Tiers, t) {
			return nil, fmt.Errorf("--verify-tiers: unknown tier %q (choose from %s)", t, strings.Join(Tiers, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// VerifierObjects are the verifier's manifests, in apply order: its
// ServiceAccount in ns, a ClusterRole to read what it verifies, Roles in
// default (Events on Nodes) and kube-system (Events on CoreDNS Pods, the
// Corefile, and the chosen tiers' rights on the Pods there), and a
// Deployment of one replica (it writes nothing but Events, so a second
// would only read the nodes twice).
func VerifierObjects(ns, image string, port int32, tiers []string) []runtime.Object {
	sa := subject(ns, VerifierName)
	ref := func(kind string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: VerifierName}
	}
	m := func(ns string, ann map[string]string) metav1.ObjectMeta {
		o := meta(VerifierName, ns, ann)
		o.Labels = VerifierLabels()
		return o
	}
	out := []runtime.Object{&corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: m(ns, nil)}}
	rules, why := policy(verifierRights("", tiers))
	out = append(out, &rbacv1.ClusterRole{TypeMeta: typeMeta("ClusterRole"), ObjectMeta: m("", why), Rules: rules},
		&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("ClusterRoleBinding"), ObjectMeta: m("", nil), RoleRef: ref("ClusterRole"), Subjects: []rbacv1.Subject{sa}})
	for _, in := range []string{metav1.NamespaceDefault, systemNamespace} {
		rules, why := policy(verifierRights(in, tiers))
		out = append(out, &rbacv1.Role{TypeMeta: typeMeta("Role"), ObjectMeta: m(in, why), Rules: rules},
			&rbacv1.RoleBinding{TypeMeta: typeMeta("RoleBinding"), ObjectMeta: m(in, nil), RoleRef: ref("Role"), Subjects: []rbacv1.Subject{sa}})
	}
	one := int32(1)
	c := Container(image, []string{"verify", "--watch", "--all", "-A", fmt.Sprintf("--health-addr=:%d", port)}, port)
	return append(out, &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: m(ns, nil),
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			// One at a time: a rollout's two verifiers would both record
			// each change of a node's status.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Selector: &metav1.LabelSelector{MatchLabels: VerifierLabels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: VerifierLabels()},
				Spec: corev1.PodSpec{ServiceAccountName: VerifierName, SecurityContext: PodSecurityContext(),
					Containers: []corev1.Container{c}},
			},
		},
	})
}

// VerifierLabels are on the verifier's objects and select its Pods; the
// component keeps them out of the writer's selector, the instance names
// the job its PodMonitor scrapes them as (monitoring.VerifyJob, which the
// data-plane alerts select).
func VerifierLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": Name, "app.kubernetes.io/component": "verifier",
		"app.kubernetes.io/instance": monitoring.VerifyJob}
}

// verifierRights are the rights granted in namespace in ("": cluster-wide)
// for the tiers.
func verifierRights(in string, tiers []string) []Right {
	var out []Right
	for _, r := range VerifierRights {
		if r.In == in && (r.Tier == "" || slices.Contains(tiers, r.Tier)) {
			out = append(out, r)
		}
	}
	return out
}
