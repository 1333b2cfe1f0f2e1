package cluster

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func template(sa string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: sa}}
}

// Each kind of workload's pod template is read from its own resource.
func TestPodTemplate(t *testing.T) {
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: "shop", Name: name} }
	r := Reader{Client: fake.NewClientset(
		&appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{Template: template("from-deployment")}},
		&appsv1.StatefulSet{ObjectMeta: meta("web"), Spec: appsv1.StatefulSetSpec{Template: template("from-statefulset")}},
		&appsv1.DaemonSet{ObjectMeta: meta("web"), Spec: appsv1.DaemonSetSpec{Template: template("from-daemonset")}},
	)}
	for _, resource := range []string{"deployment", "statefulset", "daemonset"} {
		spec, err := r.PodTemplate(context.Background(), "shop", resource, "web")
		if err != nil || spec.ServiceAccountName != "from-"+resource {
			t.Errorf("%s: got %q, %v", resource, spec.ServiceAccountName, err)
		}
	}
	if _, err := r.PodTemplate(context.Background(), "shop", "deployment", "gone"); !apierrors.IsNotFound(err) {
		t.Errorf("a missing workload: %v, want NotFound", err)
	}
}

// Every Node is listed.
func TestAllNodes(t *testing.T) {
	r := Reader{Client: fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "b"}})}
	nodes, err := r.AllNodes(context.Background())
	if err != nil || len(nodes) != 2 || nodes[0].Name != "a" || nodes[1].Name != "b" {
		t.Errorf("got %v, %v", nodes, err)
	}
}
