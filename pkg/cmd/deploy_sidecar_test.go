package cmd

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// sharingWorkloads are deploy/web and sts/db in testNS, their Pods sharing
// a process namespace when share is set.
func sharingWorkloads(share bool) []runtime.Object {
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{ShareProcessNamespace: &share,
		Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}}}
	return []runtime.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: testNS}, Spec: appsv1.DeploymentSpec{Template: pod}},
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: testNS}, Spec: appsv1.StatefulSetSpec{Template: pod}},
	}
}

// A workload whose containers share a process namespace could read the
// sidecar's token through /proc: its patch is refused, with exit 2, one line
// naming it and what to do, and nothing on stdout; with its own
// ServiceAccount (--service-account) its containers hold that token anyway.
func TestDeploySidecarSharedProcesses(t *testing.T) {
	for _, w := range []string{"deploy/web", "sts/db"} {
		r := runFake(t, sharingWorkloads(true), "deploy", "--sidecar-for", w, "-n", testNS, "--patch")
		var msg string
		if r.Err != nil {
			msg = r.Err.Error()
		}
		if r.Code() != exit.Usage || r.Out != "" || strings.Contains(msg, "\n") ||
			!strings.Contains(msg, w[strings.Index(w, "/"):]+" sets") || !strings.Contains(msg, "shareProcessNamespace") || !strings.Contains(msg, "kubectl slices deploy") {
			t.Errorf("%s sharing processes: exit %d, stdout %q, error %q", w, r.Code(), r.Out, msg)
		}
		r = runFake(t, sharingWorkloads(false), "deploy", "--sidecar-for", w, "-n", testNS, "--patch")
		if r.Code() != exit.OK || !strings.Contains(r.Out, "kubectl-slices") {
			t.Errorf("%s not sharing: exit %d, %s", w, r.Code(), r.ErrOut)
		}
	}
	r := runFake(t, sharingWorkloads(true), "deploy", "--sidecar-for", "deploy/web", "-n", testNS, "--patch", "--service-account", "web")
	mustCode(t, r, exit.OK)
	mustCode(t, runFake(t, nil, "deploy", "--sidecar-for", "deploy/none", "-n", testNS, "--patch"), exit.NotFound)
}
