package e2enode

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const loopSelector = "app.kubernetes.io/name=kubectl-slices,app.kubernetes.io/component=controller"

// TestDeployRunsAsPods: `kubectl slices deploy | kubectl apply -f -` runs
// the loop as two Pods in the restricted namespace it creates. They start
// with the in-cluster configuration and the projected token (no kubeconfig
// anywhere in the Pod), pass the kubelet's probes, serve /metrics, and the
// leader repairs a Service no controller publishes; kubectl logs shows it.
func TestDeployRunsAsPods(t *testing.T) {
	requireNode(t)
	manifests := applyDeploy(t)
	ns := newNamespace(t, nil)
	web := startWeb(t, ns, 1)

	loopNS, err := cluster.Admin.CoreV1().Namespaces().Get(context.Background(), "kubectl-slices", metav1.GetOptions{})
	if err != nil || loopNS.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("namespace kubectl-slices does not enforce restricted: %v %v", loopNS.Labels, err)
	}
	pods := runningPods(t, "kubectl-slices", loopSelector, 2, true)
	for _, p := range pods {
		if p.Spec.NodeName != "e2e-node" {
			t.Fatalf("pod %s on node %q", p.Name, p.Spec.NodeName)
		}
		if !hasProjectedToken(&p) {
			t.Fatalf("pod %s has no projected ServiceAccount token volume: %+v", p.Name, p.Spec.Volumes)
		}
		for _, c := range p.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "KUBECONFIG" {
					t.Fatalf("pod %s sets KUBECONFIG", p.Name)
				}
			}
		}
	}
	if !strings.Contains(manifests, "readinessProbe") || !strings.Contains(manifests, "livenessProbe") {
		t.Fatalf("the Deployment has no probes:\n%s", manifests)
	}

	// The Service has no slices (no EndpointSlice controller runs): the
	// leader takes it over and publishes the workload's Pod.
	waitSlice(t, ns, "web", map[string]bool{web[0].Status.PodIP: true})

	// The Lease is held by one of the Pods: it got there with the
	// ServiceAccount's projected token through the kubernetes Service.
	lease, err := cluster.Admin.CoordinationV1().Leases("kubectl-slices").Get(context.Background(), "kubectl-slices", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	leader := ""
	for _, p := range pods {
		if strings.HasPrefix(holder, p.Name) {
			leader = p.Name
		}
	}
	if leader == "" {
		t.Fatalf("Lease holder %q is none of the Pods", holder)
	}

	// /metrics on the Pod's port, as Prometheus would scrape it.
	for _, p := range pods {
		code, body, err := httpGet(fmt.Sprintf("http://%s:8080/metrics", p.Status.PodIP))
		if err != nil || code != 200 || !strings.Contains(body, "kubectl_slices_standby_services") {
			t.Fatalf("GET /metrics on %s: %d %v\n%.2000s", p.Name, code, err, body)
		}
	}
	eventually(t, 20*time.Second, "takeover counted in the leader's /metrics", func() error {
		ip := ""
		for _, p := range pods {
			if p.Name == leader {
				ip = p.Status.PodIP
			}
		}
		_, body, err := httpGet(fmt.Sprintf("http://%s:8080/metrics", ip))
		if err != nil {
			return err
		}
		if !strings.Contains(body, "kubectl_slices_takeovers_total 1") {
			return fmt.Errorf("no takeover counted:\n%.3000s", body)
		}
		return nil
	})

	// kubectl logs reads the container's lines through the kubelet.
	eventually(t, 20*time.Second, "the leader's log", func() error {
		logs := kubectl(t, "", "logs", "-n", "kubectl-slices", leader)
		if logs.Code != 0 {
			return fmt.Errorf("kubectl logs: %s", logs.Stderr)
		}
		for _, want := range []string{"service " + ns + "/web: taking over", "service " + ns + "/web: created 1 slice"} {
			if !strings.Contains(logs.Stdout, want) {
				return fmt.Errorf("no %q in:\n%s", want, logs.Stdout)
			}
		}
		return nil
	})
	noRestarts(t, "kubectl-slices", loopSelector)
}

// applyDeploy applies `kubectl slices deploy` (with --image of the local
// image and extra args) piped into kubectl apply, and deletes it all at the
// end of the test. It returns the manifests.
func applyDeploy(t *testing.T, args ...string) string {
	t.Helper()
	manifests := kubectl(t, "", append([]string{"slices", "deploy", "--image", pluginImage}, args...)...).ok(t)
	kubectl(t, manifests, "apply", "-f", "-").ok(t)
	t.Cleanup(func() {
		kubectl(t, manifests, "delete", "--wait=false", "--ignore-not-found", "-f", "-")
		// The namespace goes with its Pods (the namespace controller's and
		// the garbage collector's work); the next test may apply it again.
		eventually(t, 90*time.Second, "namespace kubectl-slices gone", func() error {
			_, err := cluster.Admin.CoreV1().Namespaces().Get(context.Background(), "kubectl-slices", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("still there (%v)", err)
		})
	})
	return manifests
}

// startWeb runs replicas Pods of the workload labelled app=web and a
// Service web selecting them, and returns the Pods once Ready.
func startWeb(t *testing.T, ns string, replicas int) []corev1.Pod {
	t.Helper()
	kubectl(t, webDeployment(replicas)+"---\n"+webService, "apply", "-n", ns, "-f", "-").ok(t)
	return runningPods(t, ns, "app=web", replicas, true)
}

func webDeployment(replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata:
      labels: {app: web}
    spec:
%s`, replicas, indent(workloadPodSpec(), "      "))
}

const webService = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
`

// waitSlice waits until the Service's slices of kubectl-slices publish
// exactly the addresses in want as ready (true) or not ready (false).
func waitSlice(t *testing.T, ns, svc string, want map[string]bool) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("slices of %s/%s publish %v", ns, svc, want), func() error {
		list, err := cluster.Admin.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=" + svc + "," + discoveryv1.LabelManagedBy + "=kubectl-slices"})
		if err != nil {
			return err
		}
		got := map[string]bool{}
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				for _, a := range e.Addresses {
					got[a] = e.Conditions.Ready != nil && *e.Conditions.Ready
				}
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("published %v", got)
		}
		return nil
	})
}

// hasProjectedToken reports whether the Pod mounts a projected
// ServiceAccount token (the in-cluster configuration's credential).
func hasProjectedToken(p *corev1.Pod) bool {
	for _, v := range p.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil {
				return true
			}
		}
	}
	return false
}
