package cmd

import (
	"io"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-slices/kubectl-slices/pkg/deploy"
)

// The container args of every manifest deploy prints are a command line
// this build accepts: the subcommand and each flag exist and their values
// parse, so a renamed or removed flag cannot ship in a manifest that
// crash-loops.
func TestDeployArgsParse(t *testing.T) {
	base := deploy.Options{Namespace: "ops", Image: "img", Replicas: 2, HealthPort: 8080}
	cluster, ns := base, base
	cluster.Scope, ns.Scope = deploy.Cluster, deploy.Namespace
	modes := map[string][]runtime.Object{}
	for name, o := range map[string]deploy.Options{"cluster": cluster, "namespace": ns} {
		objs, err := deploy.Objects(o)
		if err != nil {
			t.Fatal(err)
		}
		modes[name] = objs
	}
	withHook, err := deploy.WithWebhook(modes["cluster"], cluster, deploy.TLS{CertManager: true}, deploy.Allowed{Users: []string{"alice"}, Groups: []string{"system:masters"}})
	if err != nil {
		t.Fatal(err)
	}
	modes["webhook"] = withHook
	withControllers, err := deploy.WithWebhook(modes["cluster"], cluster, deploy.TLS{CertManager: true}, deploy.Allowed{ControllerUsers: []string{"system:kube-controller-manager", "kcm-x"}})
	if err != nil {
		t.Fatal(err)
	}
	modes["webhook with controller users"] = withControllers
	patch, err := deploy.SidecarPatch(deploy.SidecarOptions{Namespace: "ops", Workload: deploy.Workload{Resource: "deployment", Name: "web"}, Image: "img", HealthPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	for name, objs := range modes {
		var args []string
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				args = d.Spec.Template.Spec.Containers[0].Args
			}
		}
		checkArgs(t, name, args)
	}
	checkArgs(t, "sidecar", sidecarArgs(t, patch))
}

func checkArgs(t *testing.T, mode string, args []string) {
	t.Helper()
	if len(args) == 0 {
		t.Fatalf("%s: no container args", mode)
	}
	root := NewRootCommand(genericiooptions.IOStreams{In: nil, Out: io.Discard, ErrOut: io.Discard})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd.Name() != args[0] {
		t.Fatalf("%s: %v: no subcommand %q (%v)", mode, args, args[0], err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("%s: %v: %v", mode, args, err)
	}
}

// sidecarArgs digs the container's args out of the strategic-merge patch.
func sidecarArgs(t *testing.T, patch map[string]any) []string {
	t.Helper()
	spec, _ := patch["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	podSpec, _ := tmpl["spec"].(map[string]any)
	var args []string
	switch cs := podSpec["containers"].(type) {
	case []any:
		for _, a := range cs[0].(map[string]any)["args"].([]any) {
			args = append(args, a.(string))
		}
	case []corev1.Container:
		args = cs[0].Args
	case []map[string]any:
		args, _ = cs[0]["args"].([]string)
	}
	return args
}
