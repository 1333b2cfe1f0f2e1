package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NodeName is the name the first real node registers under; NodeNameB the
// second's (NodeOptions.Name).
const (
	NodeName  = "e2e-node"
	NodeNameB = "e2e-node-b"
)

// kubeletUser is a kubelet's identity: the name the Node authorizer would
// expect, in system:masters because this API server authorizes with RBAC
// alone and no Node authorizer. The token file knows one per node name.
func kubeletUser(node string) string { return "system:node:" + node }

// NodeMountPoints are the paths the kubelet, containerd and the CNI
// plugins write whatever their configuration says: StartNode mounts a tmpfs
// on each, private to its mount namespace, making those it lacks. A caller
// outside that namespace may remove, once it ended, those it made.
var NodeMountPoints = []string{"/var/log/pods", "/var/log/containers", "/run/netns", "/var/lib/cni", "/run/containerd", "/var/lib/kubelet"}

// NodeOptions configure StartNode.
type NodeOptions struct {
	// Name is the Node's name, NodeName (empty) or NodeNameB.
	Name string
	// Labels are the kubelet's --node-labels, e.g. a zone.
	Labels map[string]string
	// BinDir holds kubelet, containerd, containerd-shim-runc-v2 and ctr
	// (hack/build-node.sh).
	BinDir string
	// IP is the node's address: the kubelet's node IP. The first node's is
	// on lo, and kube-apiserver must advertise and bind it
	// (Options.AdvertiseAddress) so that Pods can reach it; an Own node's is
	// on its end of the link.
	IP string
	// PodCIDR is the bridge network's range, e.g. 10.244.0.0/24.
	PodCIDR string
	// Own runs the node in network and mount namespaces of its own, linked
	// to the caller's by a veth pair: the caller's namespace routes IP and
	// PodCIDR there, the node's routes the API server's advertised address
	// (the first node's IP) and PeerCIDRs (the other nodes' Pods) back; no
	// default route. Its kubelet's tmpfs mounts and the containers' mounts
	// stay in its mount namespace.
	Own       bool
	PeerCIDRs []string
	// PauseImage is the sandbox image, one of Images: nothing is pulled.
	PauseImage string
	// Images are OCI archives imported into containerd before the kubelet
	// starts.
	Images []string
	// ClusterDNS is the kubelet's clusterDNS, the nameservers of the
	// resolv.conf it writes for Pods of dnsPolicy ClusterFirst (the
	// kube-dns Service's ClusterIP); none when empty.
	ClusterDNS []string
	// CNIBinDir holds the bridge, host-local and loopback plugins; Runc is
	// the runc binary. Debian: /usr/lib/cni and /usr/sbin/runc.
	CNIBinDir, Runc string
}

// Node is a running containerd and kubelet, registered with the control
// plane. The first node started also runs the scheduler's one job: a loop
// that binds every unscheduled Pod to a node it fits (bind.go).
type Node struct {
	cp         *ControlPlane
	dir        string
	sock       string
	opts       NodeOptions
	ns         *nodeNamespaces // Own nodes only
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
	return run([][]string{{"ip", "link", "set", "lo", "up"}, {"ip", "addr", "add", ip + "/32", "dev", "lo"}})
}

// StartNode starts containerd and the kubelet in the namespaces NodeNetwork
// prepared (or, Own, in namespaces of the node's own) and waits until the
// Node is Ready. It adds a bridge and mounts (containerd's and the
// kubelet's); no Service routing: that is kube-proxy's, run as Pods. The
// caller must call Stop.
func (cp *ControlPlane) StartNode(ctx context.Context, o NodeOptions) (*Node, error) {
	// Its tmpfs mounts would shadow the host's directories: only the init of
	// fresh namespaces (unshare --pid --fork --mount-proc --mount) may.
	if os.Getpid() != 1 {
		return nil, errors.New("a real node mounts over /var/lib/kubelet and more: run it as the init of namespaces of its own (unshare --net --mount --pid --fork --mount-proc)")
	}
	if o.Name == "" {
		o.Name = NodeName
	}
	if o.Name != NodeName && o.Name != NodeNameB {
		return nil, fmt.Errorf("node name %q: the token file knows the kubelets of %s and %s only", o.Name, NodeName, NodeNameB)
	}
	n := &Node{cp: cp, dir: filepath.Join(cp.Dir, o.Name), opts: o}
	n.sock = filepath.Join(n.dir, "containerd.sock")
	if err := n.start(ctx); err != nil {
		n.Stop()
		return nil, err
	}
	return n, nil
}

// Name is the Node's name; IP its address.
func (n *Node) Name() string { return n.opts.Name }
func (n *Node) IP() string   { return n.opts.IP }

func (n *Node) start(ctx context.Context) error {
	if err := os.MkdirAll(n.dir, 0o755); err != nil {
		return err
	}
	var mounts [][]string
	for _, d := range NodeMountPoints {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		mounts = append(mounts, []string{"mount", "-t", "tmpfs", "tmpfs", d})
	}
	if n.opts.Own {
		var err error
		if n.ns, err = newNodeNamespaces(n.dir, n.opts.IP, n.cp.opts.AdvertiseAddress, n.opts.PodCIDR, n.opts.PeerCIDRs); err != nil {
			return err
		}
	}
	if err := run(n.inside(mounts)); err != nil {
		return err
	}
	if err := n.writeConfigs(); err != nil {
		return err
	}
	var err error
	n.containerd, err = n.startProcess("containerd", filepath.Join(n.opts.BinDir, "containerd"), "--config", filepath.Join(n.dir, "containerd.toml"))
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
	args := append([]string{"--config", filepath.Join(n.dir, "kubelet.yaml"), "--kubeconfig", filepath.Join(n.dir, "kubelet.kubeconfig"),
		"--root-dir", filepath.Join(n.dir, "kubelet"), "--cert-dir", filepath.Join(n.dir, "kubelet-pki"),
		"--hostname-override", n.opts.Name, "--node-ip", n.opts.IP, "--v=1"}, labelFlag(n.opts.Labels)...)
	n.kubelet, err = n.startProcess("kubelet", filepath.Join(n.opts.BinDir, "kubelet"), args...)
	if err != nil {
		return err
	}
	if err := n.waitReady(ctx); err != nil {
		return err
	}
	// What kube-controller-manager's node IPAM would write (set once):
	// the Node says its Pod range, as the bridge's CNI config has it.
	patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, n.opts.PodCIDR, n.opts.PodCIDR)
	if _, err := n.cp.Admin.CoreV1().Nodes().Patch(ctx, n.opts.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("node %s: set spec.podCIDR: %w", n.opts.Name, err)
	}
	if n.cp.binder == nil {
		n.cp.binder = n
		bctx, cancel := context.WithCancel(context.Background())
		n.stopBinder, n.binderDone = cancel, make(chan struct{})
		go n.bind(bctx)
	}
	return nil
}

// inside returns the commands to run in the node's namespaces.
func (n *Node) inside(cmds [][]string) [][]string {
	if n.ns == nil {
		return cmds
	}
	out := make([][]string, len(cmds))
	for i, c := range cmds {
		out[i] = append(n.ns.enter(), c...)
	}
	return out
}

// startProcess starts one of the node's daemons in its namespaces.
func (n *Node) startProcess(name, bin string, args ...string) (*process, error) {
	if n.ns == nil {
		return startProcess(n.dir, name, bin, args...)
	}
	enter := n.ns.enter()
	return startProcess(n.dir, name, enter[0], append(append(enter[1:], bin), args...)...)
}

// ctr runs containerd's client against this node's containerd, in the
// namespace the CRI uses. Its socket is a file in the node's directory,
// reachable from any network namespace.
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
		node, err := n.cp.Admin.CoreV1().Nodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		if err == nil {
			if ready, reason := nodeReady(node); ready {
				return nil
			} else {
				last = reason
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s not Ready after 120s (%s):\n%s", n.opts.Name, last, tail(n.kubelet.log.Name(), 4000))
}

// nodeReady reports the Node's Ready condition, and why not.
func nodeReady(node *corev1.Node) (bool, string) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.Reason + ": " + c.Message
		}
	}
	return false, "no Ready condition"
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
	n.ns.stop()
}

// labelFlag is the kubelet's --node-labels for labels, sorted, or none.
func labelFlag(labels map[string]string) []string {
	if len(labels) == 0 {
		return nil
	}
	var l []string
	for k, v := range labels {
		l = append(l, k+"="+v)
	}
	sort.Strings(l)
	return []string{"--node-labels", strings.Join(l, ",")}
}

// run runs each command, failing on the first that fails.
func run(cmds [][]string) error {
	for _, c := range cmds {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
	return nil
}
