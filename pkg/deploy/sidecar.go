package deploy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Workload is an existing workload the loop joins as a sidecar.
type Workload struct {
	// Resource is kubectl's name for its kind: deployment, statefulset or
	// daemonset; all three keep their pod template at spec.template.
	Resource, Name string
}

// ParseWorkload reads KIND/NAME as kubectl names it (deploy/web,
// deployment.apps/web, sts/db, ds/agent).
func ParseWorkload(s string) (Workload, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return Workload{}, fmt.Errorf("name the workload as KIND/NAME, e.g. deploy/web (got %q)", s)
	}
	kinds := map[string]string{
		"deploy": "deployment", "deployment": "deployment", "deployments": "deployment", "deployment.apps": "deployment", "deployments.apps": "deployment",
		"sts": "statefulset", "statefulset": "statefulset", "statefulsets": "statefulset", "statefulset.apps": "statefulset", "statefulsets.apps": "statefulset",
		"ds": "daemonset", "daemonset": "daemonset", "daemonsets": "daemonset", "daemonset.apps": "daemonset", "daemonsets.apps": "daemonset",
	}
	r, ok := kinds[strings.ToLower(kind)]
	if !ok {
		return Workload{}, fmt.Errorf("%q: a sidecar joins a deployment, statefulset or daemonset (deploy/NAME, sts/NAME, ds/NAME)", s)
	}
	return Workload{Resource: r, Name: name}, nil
}

// SidecarOptions choose the sidecar's manifests.
type SidecarOptions struct {
	Namespace  string
	Workload   Workload
	Image      string
	HealthPort int32
	// ServiceAccount is the workload's own, to bind the Role to; empty: a
	// ServiceAccount of ours, which the patch makes the workload's.
	ServiceAccount string
}

func (o SidecarOptions) validate() error {
	return Options{Namespace: o.Namespace, Image: o.Image, Replicas: 1, HealthPort: o.HealthPort}.validate()
}

// SidecarObjects are the ServiceAccount (unless the workload's own is
// named) and the namespace Role and binding the sidecar needs: it watches
// the workload's namespace only.
func SidecarObjects(o SidecarOptions) ([]runtime.Object, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	var out []runtime.Object
	sa := o.ServiceAccount
	if sa == "" {
		sa = Name
		out = append(out, ServiceAccount(o.Namespace))
	}
	return append(out, RBAC(o.Namespace, Namespace, subject(o.Namespace, sa))...), nil
}

// SidecarPatch is the strategic-merge patch adding the loop's container to
// the workload's pod template (containers, volumes and mounts merge by
// name and path, so applying it twice changes nothing). The container sets
// its own user and seccomp profile, since the workload's pod security
// context is not ours.
//
// Without the workload's own ServiceAccount, the Pod runs as ours, whose
// token may write EndpointSlices and the Lease: only the loop's container
// mounts it (tokenVolume), and the Pod's automount is turned off, so the
// workload's own containers hold no token at all. A projected token is
// always the Pod's ServiceAccount's, so the Pod must run as ours for the
// sidecar to have one. With the workload's ServiceAccount bound instead,
// its containers keep their token as before, and with it the loop's
// rights: that is the choice --service-account makes.
func SidecarPatch(o SidecarOptions) (map[string]any, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := Container(o.Image, Args(o.Namespace, Namespace, o.HealthPort), o.HealthPort)
	psc := PodSecurityContext()
	c.SecurityContext.RunAsUser, c.SecurityContext.RunAsGroup = psc.RunAsUser, psc.RunAsGroup
	c.SecurityContext.SeccompProfile = psc.SeccompProfile
	var pod corev1.PodSpec
	if o.ServiceAccount == "" {
		vol := tokenVolume()
		c.VolumeMounts = []corev1.VolumeMount{{Name: vol.Name, MountPath: TokenPath, ReadOnly: true}}
		pod = corev1.PodSpec{ServiceAccountName: Name, AutomountServiceAccountToken: ptr(false), Volumes: []corev1.Volume{vol}}
	}
	pod.Containers = []corev1.Container{c}
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pod)
	if err != nil {
		return nil, err
	}
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}}, nil
}

// TokenPath is where client-go's in-cluster configuration reads the
// token, the CA bundle and the namespace.
const TokenPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// tokenVolume is what the kubelet mounts at TokenPath when it automounts a
// token (the kube-api-access volume): a bound token of the Pod's
// ServiceAccount it rotates, the cluster's CA bundle and the namespace.
func tokenVolume() corev1.Volume {
	expiry := int64(3607) // the kubelet's own for automounted tokens
	mode := int32(0o644)  // readable by the loop's user whatever owns the files
	return corev1.Volume{Name: Name + "-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
}

// CheckSharedProcesses refuses a workload whose Pods share one process
// namespace: there a workload container reads the sidecar's files through
// /proc/PID/root, the token the patch keeps out of its reach included.
func CheckSharedProcesses(w Workload, pod corev1.PodSpec) error {
	if pod.ShareProcessNamespace == nil || !*pod.ShareProcessNamespace {
		return nil
	}
	return fmt.Errorf("%s/%s sets shareProcessNamespace: true, so its containers could read the loop's token "+
		"through /proc; run the loop as its own Deployment instead (kubectl slices deploy --namespace-scoped)", w.Resource, w.Name)
}
