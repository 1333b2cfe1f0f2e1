package deploy

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	certutil "k8s.io/client-go/util/cert"
)

// --webhook-client-ca puts the CA in a ConfigMap the container mounts, and
// makes the webhook require it (--client-ca-file).
func TestWebhookClientCA(t *testing.T) {
	ca, _, err := certutil.GenerateSelfSignedCertKey("webhook-client-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := Request{Namespace: "ops", Image: "img", Replicas: 1, HealthPort: 8080, Webhook: true, WebhookClientCA: ca}
	if err := r.Validate(noCheck); err != nil {
		t.Fatal(err)
	}
	out, err := Render(r)
	if err != nil {
		t.Fatal(err)
	}
	objs := out.Data.([]runtime.Object)
	cm, ok := objs[len(objs)-1].(*corev1.ConfigMap)
	if !ok || cm.Name != "kubectl-slices-webhook-client-ca" || cm.Namespace != "ops" || cm.Data["ca.crt"] != string(ca) {
		t.Fatalf("last object %+v, want the CA's ConfigMap", objs[len(objs)-1])
	}
	var d *appsv1.Deployment
	for _, o := range objs {
		if dd, ok := o.(*appsv1.Deployment); ok {
			d = dd
		}
	}
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if !strings.Contains(strings.Join(c.Args, " "), "--client-ca-file=/etc/kubectl-slices/client-ca/ca.crt") {
		t.Errorf("args %v lack --client-ca-file", c.Args)
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.MountPath == "/etc/kubectl-slices/client-ca" && m.ReadOnly)
	}
	vol := spec.Volumes[len(spec.Volumes)-1]
	if !mounted || vol.ConfigMap == nil || vol.ConfigMap.Name != cm.Name {
		t.Errorf("mounts %v, volume %+v", c.VolumeMounts, vol)
	}
	// Without the flag, no ConfigMap and no --client-ca-file.
	r.WebhookClientCA = nil
	plain, _ := Render(r)
	for _, o := range plain.Data.([]runtime.Object) {
		if _, ok := o.(*corev1.ConfigMap); ok {
			t.Error("a ConfigMap without --webhook-client-ca")
		}
		if dd, ok := o.(*appsv1.Deployment); ok && strings.Contains(strings.Join(dd.Spec.Template.Spec.Containers[0].Args, " "), "client-ca") {
			t.Error("--client-ca-file without --webhook-client-ca")
		}
	}
	for _, bad := range [][]byte{[]byte("not a certificate"), {}} {
		r.WebhookClientCA = bad
		if err := r.Validate(noCheck); err == nil || !strings.Contains(err.Error(), "--webhook-client-ca holds no PEM certificate") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	r.Webhook, r.WebhookClientCA = false, ca
	if err := r.Validate(noCheck); err == nil || !strings.Contains(err.Error(), "--webhook-client-ca goes with --webhook") {
		t.Errorf("without --webhook: %v", err)
	}
}
