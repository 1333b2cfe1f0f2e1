package deploy

import (
	"reflect"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestWebhook(t *testing.T) {
	o := opts(Cluster)
	objs, _ := Objects(o)
	before := objs[6].(*appsv1.Deployment).DeepCopy()
	tls := TLS{CertPEM: []byte("c"), KeyPEM: []byte("k"), CABundle: []byte("ca")}
	out, err := WithWebhook(objs, o, tls, Allowed{Users: []string{"alice"}, Groups: []string{"system:masters", "slice-ops"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(objs[6], before) {
		t.Error("WithWebhook changed its input Deployment")
	}
	want := "Namespace ServiceAccount ClusterRole ClusterRoleBinding Role RoleBinding Deployment PodDisruptionBudget Service Secret ValidatingWebhookConfiguration ValidatingWebhookConfiguration NetworkPolicy"
	if got := strings.Join(kinds(t, out), " "); got != want {
		t.Fatalf("kinds %s", got)
	}
	c := out[6].(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, flag := range []string{"--webhook-addr=:8443", "--tls-cert-file=/etc/kubectl-slices/tls/tls.crt", "--tls-private-key-file=/etc/kubectl-slices/tls/tls.key",
		"--allow-user=system:serviceaccount:ops:kubectl-slices --allow-user=alice --allow-group=system:masters --allow-group=slice-ops"} {
		if !strings.Contains(args, flag) {
			t.Errorf("args %q lack %s", args, flag)
		}
	}
	if len(c.VolumeMounts) != 1 || !c.VolumeMounts[0].ReadOnly {
		t.Errorf("mounts %v", c.VolumeMounts)
	}
	// The key is not world-readable, and the non-root container reads it
	// through its group, which fsGroup gives the volume's files.
	pod := out[6].(*appsv1.Deployment).Spec.Template.Spec
	vol := pod.Volumes[len(pod.Volumes)-1].Secret
	psc := pod.SecurityContext
	if vol == nil || vol.DefaultMode == nil || *vol.DefaultMode != 0o440 {
		t.Errorf("TLS volume %+v: want defaultMode 0440", vol)
	}
	if psc.FSGroup == nil || psc.RunAsGroup == nil || *psc.FSGroup != *psc.RunAsGroup || *psc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: the container's group must own the volume", psc)
	}
	if before.Spec.Template.Spec.SecurityContext.FSGroup != nil {
		t.Error("fsGroup without the webhook")
	}
	// Reviewing a writer's right to list Pods is added, cluster-wide and
	// with its reason, to the loop's ClusterRole only.
	rules, why := rulesOf(t, out)
	if !grants(rules, "ClusterRole/kubectl-slices", "subjectaccessreviews", "create") ||
		!strings.Contains(why["ClusterRole/kubectl-slices"][WhyAnnotationPrefix+"subjectaccessreviews.authorization.k8s.io"], "create: pkg/webhook AccessCache") {
		t.Errorf("the ClusterRole lacks the access reviews: %v", rules["ClusterRole/kubectl-slices"])
	}
	plain, _ := rulesOf(t, objs)
	if grants(plain, "ClusterRole/kubectl-slices", "subjectaccessreviews", "create") {
		t.Error("access reviews granted without the webhook")
	}
	if s := out[9].(*corev1.Secret); string(s.Data["tls.crt"]) != "c" || s.Type != corev1.SecretTypeTLS {
		t.Errorf("secret %v", s)
	}
	hooks := func(obj runtime.Object) admissionregistrationv1.ValidatingWebhook {
		return obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[0]
	}
	svc, slices := hooks(out[10]), hooks(out[11])
	if *svc.FailurePolicy != admissionregistrationv1.Ignore || *svc.ClientConfig.Service.Path != "/validate/services" || string(svc.ClientConfig.CABundle) != "ca" {
		t.Errorf("services hook %+v", svc)
	}
	if *slices.FailurePolicy != admissionregistrationv1.Fail || *slices.ClientConfig.Service.Path != "/validate/endpointslices" ||
		slices.ObjectSelector.MatchLabels["endpointslice.kubernetes.io/managed-by"] != "kubectl-slices" {
		t.Errorf("endpointslices hook %+v", slices)
	}
	for _, h := range []admissionregistrationv1.ValidatingWebhook{svc, slices} {
		if *h.SideEffects != admissionregistrationv1.SideEffectClassNone || *h.TimeoutSeconds > 5 {
			t.Errorf("%s: side effects %v, timeout %d", h.Name, *h.SideEffects, *h.TimeoutSeconds)
		}
		for _, op := range h.Rules[0].Operations {
			if op == admissionregistrationv1.Delete {
				t.Errorf("%s sees deletes", h.Name)
			}
		}
	}

	cm, err := WithWebhook(objs, o, TLS{CertManager: true}, Allowed{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kinds(t, cm)[8:], " "); got != "Service Issuer Certificate ValidatingWebhookConfiguration ValidatingWebhookConfiguration NetworkPolicy" {
		t.Errorf("cert-manager kinds %s", got)
	}
	vwc := cm[11].(*admissionregistrationv1.ValidatingWebhookConfiguration)
	if vwc.Annotations["cert-manager.io/inject-ca-from"] != "ops/kubectl-slices-webhook" || len(hooks(vwc).ClientConfig.CABundle) != 0 {
		t.Errorf("cert-manager injection %v", vwc.Annotations)
	}

	if _, err := WithWebhook(objs, o, TLS{}, Allowed{}); err == nil {
		t.Error("no certificate accepted")
	}
	if _, err := WithWebhook(objs, opts(Namespace), tls, Allowed{}); err == nil {
		t.Error("webhook in namespace mode accepted")
	}
}

// The controllers' slices get a hook of their own: failurePolicy Ignore
// (kube-controller-manager keeps writing when the webhook is down), their
// managed-by values only, and the controller manager's identities skip
// it; the container is told the same identities.
func TestWebhookControllerHook(t *testing.T) {
	o := opts(Cluster)
	objs, _ := Objects(o)
	tls := TLS{CertPEM: []byte("c"), KeyPEM: []byte("k"), CABundle: []byte("ca")}
	users := []string{"system:kube-controller-manager", "system:serviceaccount:kube-system:endpointslice-controller"}
	out, err := WithWebhook(objs, o, tls, Allowed{ControllerUsers: users})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(out[6].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "--controller-user=system:kube-controller-manager --controller-user=system:serviceaccount:kube-system:endpointslice-controller") {
		t.Errorf("args %q lack the controller users", args)
	}
	hooks := out[11].(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks
	if len(hooks) != 2 {
		t.Fatalf("%d endpointslice hooks", len(hooks))
	}
	ours, ctrl := hooks[0], hooks[1]
	if *ours.FailurePolicy != admissionregistrationv1.Fail || ours.Name == ctrl.Name {
		t.Errorf("our slices' hook %+v", ours)
	}
	sel := ctrl.ObjectSelector.MatchExpressions
	if *ctrl.FailurePolicy != admissionregistrationv1.Ignore || *ctrl.ClientConfig.Service.Path != "/validate/endpointslices" || len(ctrl.ObjectSelector.MatchLabels) != 0 ||
		len(sel) != 1 || sel[0].Key != "endpointslice.kubernetes.io/managed-by" || sel[0].Operator != "In" ||
		strings.Join(sel[0].Values, ",") != "endpointslice-controller.k8s.io,endpointslicemirroring-controller.k8s.io" ||
		*ctrl.SideEffects != admissionregistrationv1.SideEffectClassNone || string(ctrl.ClientConfig.CABundle) != "ca" {
		t.Errorf("controllers' hook %+v", ctrl)
	}
	want := `!(request.userInfo.username in ["system:kube-controller-manager", "system:serviceaccount:kube-system:endpointslice-controller"])`
	if len(ctrl.MatchConditions) != 1 || ctrl.MatchConditions[0].Expression != want {
		t.Errorf("controllers' hook conditions %+v", ctrl.MatchConditions)
	}
	for _, op := range ctrl.Rules[0].Operations {
		if op == admissionregistrationv1.Delete {
			t.Error("the controllers' hook sees deletes")
		}
	}
	// No controller users: those slices unguarded, no hook, and the
	// container told so rather than left to its default.
	none, _ := WithWebhook(objs, o, tls, Allowed{})
	if n := len(none[11].(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks); n != 1 {
		t.Errorf("%d endpointslice hooks without controller users", n)
	}
	if args := none[6].(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args; args[len(args)-1] != "--controller-user=" {
		t.Errorf("args without controller users %q", args)
	}
}
