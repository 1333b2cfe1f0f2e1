package deploy

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// clientCADir is where the container reads the CA of the API server's
// webhook client certificate.
const clientCADir = "/etc/kubectl-slices/client-ca"

// CheckClientCA refuses a --webhook-client-ca that holds no certificate.
func CheckClientCA(pemData []byte) error {
	for rest := pemData; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return fmt.Errorf("--webhook-client-ca holds no PEM certificate: name the CA that signed the API server's webhook client certificate")
		}
		if _, err := x509.ParseCertificate(b.Bytes); b.Type == "CERTIFICATE" && err == nil {
			return nil
		}
	}
}

// withClientCA returns objs (from WithWebhook) with the CA in a ConfigMap,
// mounted into the loop's container, whose webhook then requires the API
// server's client certificate (--client-ca-file). The CA is public: a
// ConfigMap, not a Secret.
func withClientCA(objs []runtime.Object, ns string, ca []byte) []runtime.Object {
	name := WebhookName + "-client-ca"
	out := make([]runtime.Object, 0, len(objs)+1)
	for _, obj := range objs {
		if d, ok := obj.(*appsv1.Deployment); ok {
			d = d.DeepCopy()
			spec := &d.Spec.Template.Spec
			c := &spec.Containers[0]
			c.Args = append(c.Args, "--client-ca-file="+clientCADir+"/ca.crt")
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "client-ca", MountPath: clientCADir, ReadOnly: true})
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "client-ca", VolumeSource: corev1.VolumeSource{
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
			obj = d
		}
		out = append(out, obj)
	}
	return append(out, &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(name, ns, nil),
		Data:       map[string]string{"ca.crt": string(ca)},
	})
}
