package e2enode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
	"github.com/kubectl-slices/kubectl-slices/test/ociimage"
)

// Images built here and imported into the node's containerd.
const (
	pluginImage   = "localhost/kubectl-slices:e2e"
	workloadImage = "localhost/e2e-workload:e2e"
	pauseImage    = "localhost/pause:e2e"
)

// The two nodes: the first in the test's network namespace, with the API
// server; the second in namespaces of its own, routed to the first.
const (
	nodeIP   = "172.30.0.1"
	podCIDR  = "10.244.0.0/24"
	nodeBIP  = "172.30.0.2"
	podCIDRB = "10.244.1.0/24"
	zoneA    = "zone-a"
	zoneB    = "zone-b"
	zoneKey  = "topology.kubernetes.io/zone"
	// coreDNSEnv names hack/build-coredns.sh's folder (its binary
	// coredns): the CoreDNS image and the DNS tests need it.
	coreDNSEnv = "KUBECTL_SLICES_COREDNS"
	// insideEnv marks the re-executed test binary, inside its namespaces;
	// it holds the directory of the binaries and images built outside.
	insideEnv = "KUBECTL_SLICES_NODE_INSIDE"
)

var (
	skipReason string
	cluster    *controlplane.ControlPlane
	node       *controlplane.Node // the first
	nodeB      *controlplane.Node
	artifacts  string // kubectl-slices, the image archives
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	nodeBin := os.Getenv("KUBECTL_SLICES_NODE_BIN_DIR")
	switch {
	case nodeBin == "":
		skipReason = "KUBECTL_SLICES_NODE_BIN_DIR is not set: run make e2e-node"
		return m.Run()
	case os.Getenv("KUBECTL_SLICES_BIN_DIR") == "":
		fmt.Fprintln(os.Stderr, "e2enode: KUBECTL_SLICES_BIN_DIR is not set; run `make e2e-node`")
		return 1
	case os.Geteuid() != 0:
		fmt.Fprintln(os.Stderr, "e2enode: a real node needs root")
		return 1
	}
	if dir := os.Getenv(insideEnv); dir != "" {
		artifacts = dir
		return runInside(m, nodeBin)
	}
	return runOutside()
}

// runOutside builds the binaries and images (the module cache and proxy are
// reachable here), then runs this test binary again in network, mount and
// PID namespaces of its own: when it ends, the kernel ends every process it
// started (containerd's shims and the containers too) and drops every
// mount and interface.
func runOutside() int {
	dir, err := os.MkdirTemp("", "kubectl-slices-e2enode-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The cluster's files are removed here, not inside: there the
	// kubelet's and containerd's mounts keep their mount points busy.
	if os.Getenv("KUBECTL_SLICES_KEEP_DIR") == "" {
		defer os.RemoveAll(dir)
	} else {
		defer fmt.Fprintln(os.Stderr, "e2enode: kept", dir)
	}
	var made []string
	// kube-proxy's hostPath /run/xtables.lock (FileOrCreate, as kubeadm's)
	// is made on the host's /run when missing: removed after, as the
	// mount points are.
	for _, p := range append([]string{xtablesLock}, controlplane.NodeMountPoints...) {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			made = append(made, p)
		}
	}
	defer func() {
		for _, p := range made {
			_ = os.Remove(p) // empty once the namespaces ended; the lock file is empty
		}
	}()
	start := time.Now()
	if err := buildArtifacts(dir, os.Getenv("KUBECTL_SLICES_NODE_BIN_DIR")); err != nil {
		fmt.Fprintln(os.Stderr, "e2enode: build:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2enode: binaries and images built in %s\n", time.Since(start).Round(time.Millisecond))
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command("unshare", append([]string{"--net", "--mount", "--propagation", "private", "--pid", "--fork", "--mount-proc", "--kill-child", "--", self}, os.Args[1:]...)...)
	cmd.Env = append(os.Environ(), insideEnv+"="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Killed with this process (a test timeout), unshare kills its child,
	// the namespaces' init, and the kernel every process inside.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Run()
	// runc removes each container's cgroups; the parent containerd made
	// for the CRI's namespace stays. Only an empty one can be removed.
	cgroups, _ := filepath.Glob("/sys/fs/cgroup/*/k8s.io")
	for _, c := range cgroups {
		_ = os.Remove(c)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintln(os.Stderr, "e2enode:", err)
		return 1
	}
	return 0
}

func runInside(m *testing.M, nodeBin string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	if err := controlplane.NodeNetwork(nodeIP); err != nil {
		fmt.Fprintln(os.Stderr, "e2enode:", err)
		return 1
	}
	if err := os.MkdirAll(filepath.Join(artifacts, "cluster"), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "e2enode:", err)
		return 1
	}
	var err error
	cluster, err = controlplane.Start(ctx, controlplane.Options{Dir: filepath.Join(artifacts, "cluster"), BindAddress: "0.0.0.0", AdvertiseAddress: nodeIP,
		// Webhook calls go to the Service's endpoints, not its ClusterIP:
		// the API server starts before kube-proxy, a Pod, and must not
		// depend on it. The kubelet (logs) by its address: its name
		// resolves nowhere. Privileged containers (kube-proxy), as
		// kubeadm allows them.
		APIServerArgs: []string{"--enable-aggregator-routing=true", "--kubelet-preferred-address-types=InternalIP", "--allow-privileged=true"}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2enode: start control plane:", err)
		return 1
	}
	defer cluster.Stop()
	// Deployments, ReplicaSets, DaemonSets (kube-proxy), default
	// ServiceAccounts and the kube-root-ca.crt ConfigMap Pods mount with
	// their token. No EndpointSlice controller: the slices are
	// kubectl-slices' to write.
	if err := cluster.StartControllersWith(ctx, []string{"--root-ca-file", filepath.Join(cluster.Dir, "certs", "apiserver.crt")},
		"deployment-controller", "replicaset-controller", "daemonset-controller", "serviceaccount-controller", "root-ca-certificate-publisher-controller",
		"garbage-collector-controller", "namespace-controller"); err != nil {
		fmt.Fprintln(os.Stderr, "e2enode: start controllers:", err)
		return 1
	}
	stop, err := startNodes(ctx, nodeBin)
	defer stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2enode:", err)
		return 1
	}
	proxyModes = []proxyMode{{Name: "kube-proxy", Mode: "nftables", Node: node.Name()},
		{Name: "kube-proxy-iptables", Mode: "iptables", Node: nodeB.Name()}}
	if err := deployKubeProxy(ctx, proxyModes); err != nil {
		fmt.Fprintln(os.Stderr, "e2enode:", err)
		return 1
	}
	// CoreDNS is applied, not waited for: the DNS tests wait for its
	// replicas, the others need none.
	if err := deployCoreDNS(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2enode:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2enode: control plane, two nodes and kube-proxy Ready in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

// startNodes starts the two nodes, one per zone, each with every image;
// stop stops those started.
func startNodes(ctx context.Context, nodeBin string) (stop func(), err error) {
	var images []string
	for _, f := range []string{"pause.tar", "plugin.tar", "workload.tar", "kube-proxy.tar", "coredns.tar"} {
		if _, err := os.Stat(filepath.Join(artifacts, f)); err == nil || f != "coredns.tar" {
			images = append(images, filepath.Join(artifacts, f))
		}
	}
	opts := func(name, ip, cidr, zone string, peers []string) controlplane.NodeOptions {
		return controlplane.NodeOptions{Name: name, BinDir: nodeBin, IP: ip, PodCIDR: cidr, Own: peers != nil, PeerCIDRs: peers, Labels: map[string]string{zoneKey: zone},
			PauseImage: pauseImage, ClusterDNS: []string{dnsServiceIP}, CNIBinDir: "/usr/lib/cni", Runc: "/usr/sbin/runc", Images: images}
	}
	stop = func() {
		nodeB.Stop()
		node.Stop()
	}
	if node, err = cluster.StartNode(ctx, opts(controlplane.NodeName, nodeIP, podCIDR, zoneA, nil)); err != nil {
		return stop, fmt.Errorf("start node %s: %w", controlplane.NodeName, err)
	}
	if nodeB, err = cluster.StartNode(ctx, opts(controlplane.NodeNameB, nodeBIP, podCIDRB, zoneB, []string{podCIDR})); err != nil {
		return stop, fmt.Errorf("start node %s: %w", controlplane.NodeNameB, err)
	}
	return stop, nil
}

// repoRoot is two levels above this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// buildArtifacts builds kubectl-slices (also the plugin kubectl runs here),
// the workload and pause static, and an image archive of each, the
// kube-proxy image from nodeBin's kube-proxy, and, when coreDNSEnv names
// CoreDNS's folder, hack/dnsprobe and the CoreDNS image.
func buildArtifacts(dir, nodeBin string) error {
	builds := []struct{ out, pkg, modDir string }{
		{"kubectl-slices", "./cmd/kubectl-slices", repoRoot()},
		{"workload", "./cmd/workload", filepath.Join(repoRoot(), "test")},
		{"pause", "./cmd/pause", filepath.Join(repoRoot(), "test")},
	}
	coreDNS := os.Getenv(coreDNSEnv)
	if coreDNS != "" {
		builds = append(builds, struct{ out, pkg, modDir string }{"dnsprobe", "./hack/dnsprobe", repoRoot()})
	}
	tags, err := controlplane.BuildTags(repoRoot())
	if err != nil {
		return err
	}
	for _, b := range builds {
		cmd := exec.Command("go", "build", "-trimpath", "-tags", tags, "-o", filepath.Join(dir, b.out),
			"-ldflags", "-s -w -X github.com/kubectl-slices/kubectl-slices/pkg/cmd.Version=v0.0.0-e2e", b.pkg)
		cmd.Dir = b.modDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	images := []struct {
		file string
		img  ociimage.Image
	}{
		// As the Dockerfile's: the static binary on PATH, user 65532.
		{"plugin.tar", ociimage.Image{Name: pluginImage, Files: map[string]string{"/usr/local/bin/kubectl-slices": filepath.Join(dir, "kubectl-slices")},
			Entrypoint: []string{"kubectl-slices"}, User: "65532:65532", Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}}},
		{"workload.tar", ociimage.Image{Name: workloadImage, Files: map[string]string{"/workload": filepath.Join(dir, "workload")},
			Entrypoint: []string{"/workload"}, User: "65532:65532"}},
		{"pause.tar", ociimage.Image{Name: pauseImage, Files: map[string]string{"/pause": filepath.Join(dir, "pause")},
			Entrypoint: []string{"/pause"}, User: "65535:65535"}},
	}
	proxy, err := kubeProxyImageSpec(nodeBin)
	if err != nil {
		return err
	}
	images = append(images, struct {
		file string
		img  ociimage.Image
	}{"kube-proxy.tar", proxy})
	if coreDNS != "" {
		// CoreDNS's binary is static (CGO_ENABLED=0): nothing else goes in.
		images = append(images, struct {
			file string
			img  ociimage.Image
		}{"coredns.tar", ociimage.Image{Name: coreDNSImage, Files: map[string]string{"/coredns": filepath.Join(coreDNS, "coredns")},
			Entrypoint: []string{"/coredns"}}})
	}
	for _, i := range images {
		if err := ociimage.Write(filepath.Join(dir, i.file), i.img); err != nil {
			return err
		}
	}
	return nil
}

// requireNode skips the test when no node was asked for.
func requireNode(t *testing.T) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// result is what one command printed and how it exited.
type result struct {
	Stdout, Stderr string
	Code           int
}

// kubectl runs the control plane's kubectl with kubectl-slices on PATH as
// its plugin, within two minutes; stdin, when not empty, is piped in.
func kubectl(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	return kubectlWithin(t, 2*time.Minute, stdin, args...)
}

// kubectlWithin is kubectl within timeout: a benchmark's command over many
// thousands of Services may need longer than two minutes.
func kubectlWithin(t testing.TB, timeout time.Duration, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cluster.Kubectl(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig,
		"PATH="+artifacts+string(os.PathListSeparator)+cluster.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	res := result{Stdout: out.String(), Stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	case err != nil:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// ok fails the test unless the command exited 0, and returns its stdout.
func (r result) ok(t testing.TB) string {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}
