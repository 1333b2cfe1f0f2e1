package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NodeName is the name the real node registers under.
const NodeName = "e2e-node"

// kubeletUser is the kubelet's identity: the name the Node authorizer
// would expect, in system:masters because this API server authorizes with
// RBAC alone and no Node authorizer.
const kubeletUser = "system:node:" + NodeName

// NodeMountPoints are the paths the kubelet, containerd and the CNI
// plugins write whatever their configuration says: StartNode mounts a tmpfs
// on each, private to its mount namespace, making those it lacks. A caller
// outside that namespace may remove, once it ended, those it made.
var NodeMountPoints = []string{"/var/log/pods", "/var/log/containers", "/run/netns", "/var/lib/cni", "/run/containerd", "/var/lib/kubelet"}

// NodeOptions configure StartNode.
type NodeOptions struct {
	// BinDir holds kubelet, containerd, containerd-shim-runc-v2 and ctr
	// (hack/build-node.sh).
	BinDir string
	// IP is the node's address, put on lo: the kubelet's node IP, and the
	// address kube-apiserver must advertise (Options.AdvertiseAddress) and
	// bind, so that Pods on the bridge can reach it.
	IP string
	// PodCIDR is the bridge network's range, e.g. 10.244.0.0/24.
	PodCIDR string
	// PauseImage is the sandbox image, one of Images: nothing is pulled.
	PauseImage string
	// Images are OCI archives imported into containerd before the kubelet
	// starts.
	Images []string
	// CNIBinDir holds the bridge, host-local and loopback plugins; Runc is
	// the runc binary. Debian: /usr/lib/cni and /usr/sbin/runc.
	CNIBinDir, Runc string
}

// Node is a running containerd and kubelet, registered with the control
// plane, and a scheduler's one job done by a loop that binds every
// unscheduled Pod to it.
type Node struct {
	cp         *ControlPlane
	dir        string
	sock       string
	opts       NodeOptions
	containerd *process
	kubelet    *process
	stopBinder context.CancelFunc
	binderDone chan struct{}
}

// NodeNetwork prepares a fresh network namespace for a node at ip and its
// control plane: lo up, ip on lo. It refuses unless the namespace is one
// of its own (only lo in it): run it under unshare --net --mount --pid,
// whose end takes every process, mount and interface with it. Call it
// before Start, whose API server then binds there.
func NodeNetwork(ip string) error {
	// Not /sys/class/net: sysfs shows the namespace of whoever mounted it.
	out, err := exec.Command("ip", "-o", "link", "show").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip link: %v: %s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] != "lo:" {
			return fmt.Errorf("a real node changes the network: run it in a network namespace of its own (found interface %s)", strings.TrimSuffix(f[1], ":"))
		}
	}
	for _, c := range [][]string{{"ip", "link", "set", "lo", "up"}, {"ip", "addr", "add", ip + "/32", "dev", "lo"}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	return nil
}

// StartNode starts containerd and the kubelet in the namespaces NodeNetwork
// prepared and waits until the Node is Ready. It adds a bridge, a DNAT rule
// and mounts (containerd's and the kubelet's). The caller must call Stop.
func (cp *ControlPlane) StartNode(ctx context.Context, o NodeOptions) (*Node, error) {
	// Its tmpfs mounts would shadow the host's directories: only the init of
	// fresh namespaces (unshare --pid --fork --mount-proc --mount) may.
	if os.Getpid() != 1 {
		return nil, errors.New("a real node mounts over /var/lib/kubelet and more: run it as the init of namespaces of its own (unshare --net --mount --pid --fork --mount-proc)")
	}
	n := &Node{cp: cp, dir: filepath.Join(cp.Dir, "node"), opts: o}
	n.sock = filepath.Join(n.dir, "containerd.sock")
	if err := n.start(ctx); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	apiPort := n.cp.URL[strings.LastIndex(n.cp.URL, ":")+1:]
	svc, err := n.cp.Admin.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the kubernetes Service: %w", err)
	}
	// Pods reach the API server at the kubernetes Service's ClusterIP, as
	// in-cluster clients do; without kube-proxy, one DNAT rule routes it.
	setup := [][]string{
		{"iptables", "-t", "nat", "-A", "PREROUTING", "-d", svc.Spec.ClusterIP + "/32", "-p", "tcp", "--dport", "443",
			"-j", "DNAT", "--to-destination", n.opts.IP + ":" + apiPort},
	}
	for _, d := range NodeMountPoints {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		setup = append(setup, []string{"mount", "-t", "tmpfs", "tmpfs", d})
	}
	for _, c := range setup {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	if err := n.writeConfigs(); err != nil {
		return err
	}
	n.containerd, err = startProcess(n.dir, "containerd", filepath.Join(n.opts.BinDir, "containerd"), "--config", filepath.Join(n.dir, "containerd.toml"))
	if err != nil {
		return err
	}
	if err := n.waitContainerd(ctx); err != nil {
		return err
	}
	for _, img := range n.opts.Images {
		if out, err := n.ctr(ctx, "images", "import", "--snapshotter", "overlayfs", img); err != nil {
			return fmt.Errorf("import %s: %v: %s", img, err, out)
		}
	}
	n.kubelet, err = startProcess(n.dir, "kubelet", filepath.Join(n.opts.BinDir, "kubelet"),
		"--config", filepath.Join(n.dir, "kubelet.yaml"), "--kubeconfig", filepath.Join(n.dir, "kubelet.kubeconfig"),
		"--root-dir", filepath.Join(n.dir, "kubelet"), "--cert-dir", filepath.Join(n.dir, "kubelet-pki"),
		"--hostname-override", NodeName, "--node-ip", n.opts.IP, "--v=1")
	if err != nil {
		return err
	}
	if err := n.waitReady(ctx); err != nil {
		return err
	}
	bctx, cancel := context.WithCancel(context.Background())
	n.stopBinder, n.binderDone = cancel, make(chan struct{})
	go n.bind(bctx)
	return nil
}

// ctr runs containerd's client against this node's containerd, in the
// namespace the CRI uses.
func (n *Node) ctr(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(n.opts.BinDir, "ctr"), append([]string{"--address", n.sock, "-n", "k8s.io"}, args...)...)
	return cmd.CombinedOutput()
}

func (n *Node) waitContainerd(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if n.containerd.exited() {
			return fmt.Errorf("containerd exited during start-up:\n%s", tail(n.containerd.log.Name(), 3000))
		}
		if _, err := n.ctr(ctx, "version"); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("containerd not serving after 60s:\n%s", tail(n.containerd.log.Name(), 3000))
}

// waitReady waits until the Node exists and says Ready.
func (n *Node) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(120 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if n.kubelet.exited() {
			return fmt.Errorf("kubelet exited during start-up:\n%s", tail(n.kubelet.log.Name(), 4000))
		}
		node, err := n.cp.Admin.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					last = c.Reason + ": " + c.Message
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s not Ready after 120s (%s):\n%s", NodeName, last, tail(n.kubelet.log.Name(), 4000))
}

// bind schedules: every Pod without a node goes to this one, as
// kube-scheduler would with a single node that fits.
func (n *Node) bind(ctx context.Context) {
	defer close(n.binderDone)
	for ctx.Err() == nil {
		pods, err := n.cp.Admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName="})
		if err == nil {
			for _, p := range pods.Items {
				if p.DeletionTimestamp != nil {
					continue
				}
				_ = n.cp.Admin.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: p.Name, UID: p.UID},
					Target:     corev1.ObjectReference{Kind: "Node", Name: NodeName},
				}, metav1.CreateOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// KubeletLog and ContainerdLog are the paths of the node's logs.
func (n *Node) KubeletLog() string    { return filepath.Join(n.dir, "kubelet.log") }
func (n *Node) ContainerdLog() string { return filepath.Join(n.dir, "containerd.log") }

// Stop ends the binder, the kubelet, every container (so that no shim or
// container outlives the node) and containerd.
func (n *Node) Stop() {
	if n == nil {
		return
	}
	if n.stopBinder != nil {
		n.stopBinder()
		<-n.binderDone
	}
	n.kubelet.stop(10 * time.Second)
	if n.containerd != nil && !n.containerd.exited() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, _ := n.ctr(ctx, "tasks", "ls", "-q")
		for _, id := range strings.Fields(string(out)) {
			_, _ = n.ctr(ctx, "tasks", "kill", "-s", "SIGKILL", id)
		}
		for _, id := range strings.Fields(string(out)) {
			_, _ = n.ctr(ctx, "tasks", "delete", "-f", id)
		}
	}
	n.containerd.stop(10 * time.Second)
}
