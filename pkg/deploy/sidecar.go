package deploy

import (
	"fmt"
	"strings"

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
// the workload's pod template (containers merge by name, so applying it
// twice changes nothing). The container sets its own user and seccomp
// profile, since the workload's pod security context is not ours.
func SidecarPatch(o SidecarOptions) (map[string]any, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	c := Container(o.Image, Args(o.Namespace, Namespace, o.HealthPort), o.HealthPort)
	psc := PodSecurityContext()
	c.SecurityContext.RunAsUser, c.SecurityContext.RunAsGroup = psc.RunAsUser, psc.RunAsGroup
	c.SecurityContext.SeccompProfile = psc.SeccompProfile
	container, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		return nil, err
	}
	pod := map[string]any{"containers": []any{container}}
	if o.ServiceAccount == "" {
		pod["serviceAccountName"] = Name
	}
	return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": pod}}}, nil
}
