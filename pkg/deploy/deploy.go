package deploy

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Name names every object the manifests create, and the container.
const Name = "kubectl-slices"

// Scope is where the loop watches and what it may read.
type Scope int

const (
	// Cluster: every namespace, with a ClusterRole (Nodes included).
	Cluster Scope = iota
	// Namespace: one namespace, with a Role only: nothing cluster-scoped.
	Namespace
)

// Options choose the manifests.
type Options struct {
	// Namespace the loop runs in (and, with Scope Namespace, watches).
	Namespace string
	Image     string
	Replicas  int32
	Scope     Scope
	// CreateNamespace adds the Namespace, labelled to enforce the
	// restricted Pod Security Standard (cluster mode only: a namespace
	// the user names exists, and its labels are not ours to change).
	CreateNamespace bool
	// HealthPort serves /healthz, /readyz and /metrics.
	HealthPort int32
	// WebhookSources are the CIDRs the webhook port admits (WithWebhook);
	// none means EveryAddress but PodCIDRs.
	WebhookSources []string
	// PodCIDRs are the cluster's Pod addresses, cut out of EveryAddress.
	PodCIDRs []string
}

func (o Options) validate() error {
	switch {
	case o.Namespace == "":
		return fmt.Errorf("a namespace is required")
	case o.Image == "":
		return fmt.Errorf("an image is required")
	case o.Replicas < 1:
		return fmt.Errorf("replicas must be at least 1")
	case o.HealthPort < 1 || o.HealthPort > 65535:
		return fmt.Errorf("the health port must be between 1 and 65535")
	}
	return nil
}

// Objects returns the manifests of a Deployment running the loop, in apply
// order: Namespace (if CreateNamespace), ServiceAccount, RBAC, Deployment,
// PodDisruptionBudget (with more than one replica).
func Objects(o Options) ([]runtime.Object, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	var out []runtime.Object
	if o.Scope == Cluster && o.CreateNamespace {
		out = append(out, &corev1.Namespace{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: map[string]string{
				// The pod spec passes the restricted Pod Security Standard.
				"pod-security.kubernetes.io/enforce": "restricted",
			}},
		})
	}
	out = append(out, ServiceAccount(o.Namespace))
	out = append(out, RBAC(o.Namespace, o.Scope, subject(o.Namespace, Name))...)
	out = append(out, deployment(o))
	if o.Replicas > 1 {
		// With one replica, minAvailable 1 would block every node drain.
		out = append(out, pdb(o))
	}
	return out, nil
}

// ServiceAccount is the loop's identity.
func ServiceAccount(ns string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: meta(Name, ns, nil),
	}
}

func subject(ns, serviceAccount string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: ns}
}

// RBAC returns the roles and bindings for the loop running as sa in ns.
// Cluster scope: a ClusterRole with every right but the Lease's, and a Role
// for the Lease in ns. Namespace scope: one Role in ns, without Nodes.
func RBAC(ns string, scope Scope, sa rbacv1.Subject) []runtime.Object {
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	var out []runtime.Object
	if scope == Cluster {
		rules, why := policy(selectRights(func(r Right) bool { return !r.Lease && !r.Webhook }))
		out = append(out,
			&rbacv1.ClusterRole{TypeMeta: typeMeta("ClusterRole"), ObjectMeta: meta(Name, "", why), Rules: rules},
			&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("ClusterRoleBinding"), ObjectMeta: meta(Name, "", nil),
				RoleRef: ref("ClusterRole", Name), Subjects: []rbacv1.Subject{sa}})
		rules, why = policy(selectRights(func(r Right) bool { return r.Lease }))
		out = append(out,
			&rbacv1.Role{TypeMeta: typeMeta("Role"), ObjectMeta: meta(Name+"-leader-election", ns, why), Rules: rules},
			&rbacv1.RoleBinding{TypeMeta: typeMeta("RoleBinding"), ObjectMeta: meta(Name+"-leader-election", ns, nil),
				RoleRef: ref("Role", Name+"-leader-election"), Subjects: []rbacv1.Subject{sa}})
		return out
	}
	rules, why := policy(selectRights(func(r Right) bool { return !r.ClusterOnly && !r.Webhook }))
	return append(out,
		&rbacv1.Role{TypeMeta: typeMeta("Role"), ObjectMeta: meta(Name, ns, why), Rules: rules},
		&rbacv1.RoleBinding{TypeMeta: typeMeta("RoleBinding"), ObjectMeta: meta(Name, ns, nil),
			RoleRef: ref("Role", Name), Subjects: []rbacv1.Subject{sa}})
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: kind}
}

// Labels are on every object; the Deployment's Pods are selected by them.
func Labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": Name, "app.kubernetes.io/component": "controller"}
}

func meta(name, ns string, annotations map[string]string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Namespace: ns, Labels: Labels()}
	if len(annotations) > 0 {
		m.Annotations = annotations
	}
	return m
}

// Args is the loop's command line for a scope: every Service of the
// cluster or of ns, standing by beside kube-controller-manager (writing
// only for the Services it fails), with leader election on a Lease in ns,
// health and metrics on port.
func Args(ns string, scope Scope, port int32) []string {
	args := []string{"sync", "--watch", "--standby", "--all"}
	if scope == Cluster {
		args = append(args, "-A")
	} else {
		args = append(args, "-n", ns)
	}
	// The Lease is named, not left to the default, since the Role grants
	// that name alone.
	return append(args, "--leader-elect", "--leader-elect-resource-name", LeaseName, "--leader-elect-resource-namespace", ns,
		fmt.Sprintf("--health-addr=:%d", port))
}

func deployment(o Options) *appsv1.Deployment {
	replicas := o.Replicas
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(Name, o.Namespace, nil),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: Labels()},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels()},
				Spec:       PodSpec(o),
			},
		},
	}
}

// PodSpec is the Deployment's pod spec: it passes the restricted Pod
// Security Standard.
func PodSpec(o Options) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: Name,
		SecurityContext:    PodSecurityContext(),
		Containers:         []corev1.Container{Container(o.Image, Args(o.Namespace, o.Scope, o.HealthPort), o.HealthPort)},
	}
}

// PodSecurityContext is non-root with the runtime's default seccomp profile.
func PodSecurityContext() *corev1.PodSecurityContext {
	uid := int64(65532) // distroless's nonroot user, as the Dockerfile's USER
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr(true),
		RunAsUser:      &uid,
		RunAsGroup:     &uid,
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Container runs the loop with probes, resources and a locked-down
// security context (the restricted standard asks this of every container).
func Container(image string, args []string, port int32) corev1.Container {
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("metrics")}},
			PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: 3,
		}
	}
	return corev1.Container{
		Name:    Name,
		Image:   image,
		Command: []string{Name},
		Args:    args,
		Ports:   []corev1.ContainerPort{{Name: "metrics", ContainerPort: port, Protocol: corev1.ProtocolTCP}},
		// 20,000 Pods cached measured about 250 MiB resident (make
		// bench-watch); idle CPU is near zero, so no CPU limit throttles
		// a burst of syncs.
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: mustQuantity("50m"), corev1.ResourceMemory: mustQuantity("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: mustQuantity("512Mi")},
		},
		LivenessProbe:  probe("/healthz", 10),
		ReadinessProbe: probe("/readyz", 5),
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem:   ptr(true),
			RunAsNonRoot:             ptr(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

func pdb(o Options) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(Name, o.Namespace, nil),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &one,
			Selector:     &metav1.LabelSelector{MatchLabels: Labels()},
		},
	}
}
