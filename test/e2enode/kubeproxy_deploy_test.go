package e2enode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// proxyModes are the kube-proxy DaemonSets the cluster runs, one per node.
var proxyModes []proxyMode

// deployKubeProxy applies kube-proxy's manifests with kubectl and waits
// until each node's kube-proxy Pod is Ready (synced): from then on, Pods
// reach Services' ClusterIPs, the kubernetes Service's among them.
func deployKubeProxy(ctx context.Context, modes []proxyMode) error {
	apiServer := "https://" + nodeIP + cluster.URL[strings.LastIndex(cluster.URL, ":"):]
	cmd := exec.CommandContext(ctx, cluster.Kubectl(), "apply", "-f", "-")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig)
	cmd.Stdin = strings.NewReader(kubeProxyManifests(apiServer, modes))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl apply kube-proxy: %v: %s", err, out)
	}
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		pods, err := cluster.Admin.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: kubeProxyLabel})
		if err != nil {
			return err
		}
		ready := map[string]bool{}
		last = ""
		for _, p := range pods.Items {
			if podReady(&p) {
				ready[p.Spec.NodeName+"/"+p.Labels[proxyModeLabel]] = true
			} else {
				last += fmt.Sprintf("pod %s on %q: %s %s; ", p.Name, p.Spec.NodeName, p.Status.Phase, statuses(&p))
			}
		}
		missing := 0
		for _, m := range modes {
			if !ready[m.Node+"/"+m.Mode] {
				missing++
			}
		}
		if missing == 0 {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("kube-proxy not Ready on every node after 90s: %s", last)
}
