package probe

import (
	"context"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

// ProxyNamespace is where kube-proxy and the other proxies' agents run.
const ProxyNamespace = "kube-system"

// proxyPod is the proxy found on one node.
type proxyPod struct {
	kind string
	pod  *corev1.Pod
}

// kindOf recognises a proxy's Pod: kube-proxy by its k8s-app label or its
// DaemonSet's name, the others (which verify does not read) by the labels
// their manifests set. Only an administrator creates Pods in kube-system
// (and calico-system), so these are not names any tenant picks.
func kindOf(p *corev1.Pod) string {
	app := p.Labels["k8s-app"]
	switch {
	case app == "kube-proxy" || ownedByDaemonSet(p, "kube-proxy"):
		return verdict.KubeProxy
	case app == "cilium" || p.Labels["app.kubernetes.io/name"] == "cilium-agent":
		return verdict.Cilium
	case app == "calico-node":
		return verdict.Calico
	case app == "kube-router":
		return verdict.KubeRouter
	}
	return ""
}

func ownedByDaemonSet(p *corev1.Pod, name string) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Name == name {
			return true
		}
	}
	return false
}

// findProxies lists the proxies' Pods, by node: kube-proxy's wins over
// another proxy's on the same node (it is what programs the rules
// verify reads), a Running one over one that is not, then the newest.
// calico-system is read when it can be, for the operator's calico-node.
func findProxies(ctx context.Context, client kubernetes.Interface) (map[string]proxyPod, error) {
	list, err := client.CoreV1().Pods(ProxyNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pods := list.Items
	if cal, err := client.CoreV1().Pods("calico-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=calico-node"}); err == nil {
		pods = append(pods, cal.Items...)
	}
	out := map[string]proxyPod{}
	for i := range pods {
		p := &pods[i]
		kind := kindOf(p)
		if kind == "" || p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
			continue
		}
		if cur, ok := out[p.Spec.NodeName]; !ok || better(kind, p, cur) {
			out[p.Spec.NodeName] = proxyPod{kind: kind, pod: p}
		}
	}
	return out, nil
}

func better(kind string, p *corev1.Pod, cur proxyPod) bool {
	if (kind == verdict.KubeProxy) != (cur.kind == verdict.KubeProxy) {
		return kind == verdict.KubeProxy
	}
	if run, curRun := p.Status.Phase == corev1.PodRunning, cur.pod.Status.Phase == corev1.PodRunning; run != curRun {
		return run
	}
	return cur.pod.CreationTimestamp.Before(&p.CreationTimestamp) ||
		cur.pod.CreationTimestamp.Equal(&p.CreationTimestamp) && strings.Compare(p.Name, cur.pod.Name) < 0
}

// container is the kube-proxy container's name: the one named kube-proxy,
// else the first.
func container(p *corev1.Pod) string {
	i := slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return c.Name == "kube-proxy" })
	if i < 0 {
		i = 0
	}
	if len(p.Spec.Containers) == 0 {
		return ""
	}
	return p.Spec.Containers[i].Name
}

// modeOf is the proxy mode a kube-proxy Pod's command line sets:
// --proxy-mode's value; with neither it nor --config, kube-proxy's Linux
// default, iptables; "" when a config file may set it (read from the
// metrics port's /proxyMode instead).
func modeOf(p *corev1.Pod) string {
	argv := argvOf(p)
	config := false
	for i, a := range argv {
		switch {
		case strings.HasPrefix(a, "--proxy-mode="):
			return strings.TrimPrefix(a, "--proxy-mode=")
		case a == "--proxy-mode" && i+1 < len(argv):
			return argv[i+1]
		case a == "--config" || strings.HasPrefix(a, "--config="):
			config = true
		}
	}
	if config {
		return ""
	}
	return "iptables"
}

// argvOf is the kube-proxy container's command and arguments.
func argvOf(p *corev1.Pod) []string {
	var argv []string
	for _, c := range p.Spec.Containers {
		if c.Name == container(p) {
			argv = append(append(argv, c.Command...), c.Args...)
		}
	}
	return argv
}
