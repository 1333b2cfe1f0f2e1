package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWebhookInCluster: `deploy --webhook` applied as printed, its
// ValidatingWebhookConfigurations pointing at the in-cluster Service (no
// url): the API server resolves the Service to the loop's Pods (their
// slice is the loop's own) and calls them. A Service whose selector matches
// nothing gets the webhook's warning; an admin's hand edit of the loop's
// slice is refused; the loop's own writes still go through.
func TestWebhookInCluster(t *testing.T) {
	requireNode(t)
	applyDeploy(t, "--webhook")
	ctx := context.Background()
	for _, name := range []string{"kubectl-slices-services", "kubectl-slices-endpointslices"} {
		cfg, err := cluster.Admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range cfg.Webhooks {
			if h.ClientConfig.URL != nil || h.ClientConfig.Service == nil || h.ClientConfig.Service.Name != "kubectl-slices-webhook" {
				t.Fatalf("%s: webhook %s does not call the in-cluster Service: %+v", name, h.Name, h.ClientConfig)
			}
		}
	}
	loop := runningPods(t, "kubectl-slices", loopSelector, 2, true)
	want := map[string]bool{}
	for _, p := range loop {
		want[p.Status.PodIP] = true
	}
	// The API server finds the webhook's endpoints in the Service's slices.
	waitSlice(t, "kubectl-slices", "kubectl-slices-webhook", want)

	ns := newNamespace(t, nil)
	web := startWeb(t, ns, 1)
	waitSlice(t, ns, "web", map[string]bool{web[0].Status.PodIP: true})

	typo := strings.Replace(webService, "name: web", "name: typo", 1)
	typo = strings.Replace(typo, "selector: {app: web}", "selector: {app: Web}", 1)
	eventually(t, 30*time.Second, "the webhook's warning for a selector that matches nothing", func() error {
		r := kubectl(t, typo, "apply", "--dry-run=server", "-n", ns, "-f", "-")
		if r.Code != 0 || !strings.Contains(r.Stderr, "Warning: kubectl-slices") {
			return fmt.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
		}
		return nil
	})

	slices, err := cluster.Admin.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web,endpointslice.kubernetes.io/managed-by=kubectl-slices"})
	if err != nil || len(slices.Items) != 1 {
		t.Fatalf("slices of web: %v %v", slices, err)
	}
	r := kubectl(t, "", "label", "endpointslice", slices.Items[0].Name, "-n", ns, "touched=yes")
	if r.Code == 0 || !strings.Contains(r.Stderr, "is managed by kubectl-slices") {
		t.Fatalf("an admin's hand edit of the loop's slice: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	// The loop's own writes are not the guard's to refuse.
	setReady(t, web[0].Status.PodIP, false)
	waitSlice(t, ns, "web", map[string]bool{web[0].Status.PodIP: false})
}
