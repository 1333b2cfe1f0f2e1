package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// deploy --webhook reads the Nodes' spec.podCIDRs and cuts them out of the
// addresses the webhook port admits; a flag naming the sources or the Pod
// CIDRs spares the read; a cluster it may not read leaves every address,
// said on stderr with --pod-cidr.
func TestDeployWebhookPodCIDRsFromNodes(t *testing.T) {
	node := func(name string, cidrs ...string) runtime.Object {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
	}
	nodes := []runtime.Object{node("b", "10.244.1.0/24", "fd00:10:244:1::/64"), node("a", "10.244.0.0/24", "fd00:10:244::/64")}
	r := runFake(t, nodes, "deploy", "--webhook", "--cert-manager", "-o", "json")
	mustCode(t, r, 0)
	if flat := strings.Join(strings.Fields(r.Out), ""); !strings.Contains(flat, `{"cidr":"0.0.0.0/0","except":["10.244.0.0/24","10.244.1.0/24"]}`) ||
		!strings.Contains(flat, `{"cidr":"::/0","except":["fd00:10:244::/64","fd00:10:244:1::/64"]}`) {
		t.Errorf("no except list of the Nodes' Pod CIDRs:\n%s", r.Out)
	}
	if !strings.Contains(r.ErrOut, "every address but the Nodes' Pod CIDRs (spec.podCIDRs: 4)") {
		t.Errorf("note %q", r.ErrOut)
	}

	for _, args := range [][]string{{"--pod-cidr", "10.96.0.0/12"}, {"--webhook-source", "192.0.2.0/24"}} {
		r = runFake(t, nodes, append([]string{"deploy", "--webhook", "--cert-manager", "-o", "json"}, args...)...)
		mustCode(t, r, 0)
		for _, a := range r.Client.Actions() {
			if a.GetResource().Resource == "nodes" {
				t.Errorf("%v: Nodes read (%s)", args, a.GetVerb())
			}
		}
		if strings.Contains(r.Out, "10.244.") || r.ErrOut != "" {
			t.Errorf("%v: the Nodes' CIDRs used, or a note: %s", args, r.ErrOut)
		}
	}

	client := fake.NewClientset(nodes...)
	client.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no"))
	})
	r = runOn(t, context.Background(), client, "deploy", "--webhook", "--cert-manager", "-o", "json")
	mustCode(t, r, 0)
	if !strings.Contains(r.ErrOut, "every address (the Nodes could not be read: nodes is forbidden") || !strings.Contains(r.ErrOut, "--pod-cidr CIDR") ||
		strings.Contains(r.Out, `"except"`) {
		t.Errorf("forbidden: note %q", r.ErrOut)
	}

	r = runFake(t, nil, "deploy", "--webhook", "--pod-cidr", "10.0.0.0/8", "--webhook-source", "192.0.2.0/24")
	if mustCode(t, r, exit.Usage); r.Out != "" {
		t.Errorf("printed on a usage error:\n%s", r.Out)
	}
}
