package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// apiServerURL is where the node's kubelet reaches the API server: the
// control plane's URL, or, from an Own node's network namespace, the
// advertised address in place of 127.0.0.1.
func (n *Node) apiServerURL() string {
	if !n.opts.Own {
		return n.cp.URL
	}
	return "https://" + n.cp.opts.AdvertiseAddress + n.cp.URL[strings.LastIndex(n.cp.URL, ":"):]
}

// writeConfigs writes the CNI network, containerd's and the kubelet's
// configuration and the kubelet's kubeconfig into the node's directory.
func (n *Node) writeConfigs() error {
	netd := filepath.Join(n.dir, "net.d")
	if err := os.MkdirAll(netd, 0o755); err != nil {
		return err
	}
	// One bridge, the node's Pods on PodCIDR, the bridge as their gateway:
	// the host side (the kubelet's probes, the API server's webhook calls)
	// reaches them directly.
	cni := fmt.Sprintf(`{"cniVersion": "0.4.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}}
]}
`, n.opts.PodCIDR)
	containerd := n.containerdConfig(netd)
	kubelet := n.kubeletConfig()
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster: {server: %q, insecure-skip-tls-verify: true}\n"+
		"users:\n- name: kubelet\n  user: {token: %q}\ncontexts:\n- name: kubelet\n  context: {cluster: local, user: kubelet}\ncurrent-context: kubelet\n",
		n.apiServerURL(), n.cp.tokenOf(kubeletUser(n.opts.Name)))
	for name, content := range map[string]string{
		filepath.Join(netd, "10-e2e.conflist"): cni,
		"containerd.toml":                      containerd,
		"kubelet.yaml":                         kubelet,
		"kubelet.kubeconfig":                   kubeconfig,
		"resolv.conf":                          "",
	} {
		if !filepath.IsAbs(name) {
			name = filepath.Join(n.dir, name)
		}
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// containerdConfig is containerd's configuration, the CNI configuration in
// netd.
func (n *Node) containerdConfig(netd string) string {
	// restrict_oom_score_adj and disable_apparmor: a sandbox may forbid
	// lowering OOM scores and may have no AppArmor. The opt and NRI plugins
	// would write outside the node's directory; not needed.
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.nri.v1.nri"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %[5]q

[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  disable_apparmor = true
  restrict_oom_score_adj = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = %[6]q
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%[7]q]
    conf_dir = %[8]q

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`, filepath.Join(n.dir, "containerd-root"), filepath.Join(n.dir, "containerd-state"), n.sock, n.sock+".ttrpc",
		n.opts.PauseImage, n.opts.Runc, n.opts.CNIBinDir, netd)
}

// kubeletConfig is the kubelet's configuration.
func (n *Node) kubeletConfig() string {
	// Settings a container sandbox cannot honour are off: cgroup v1 is
	// accepted, no QoS cgroups or node-allocatable enforcement, no swap
	// check, no kernel-default protection. Image GC and disk eviction are
	// off: the images are imported, never pulled again. Anonymous,
	// always-allowed access to the kubelet's API stays inside the node's
	// network namespace (kube-apiserver's logs and exec go through it).
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
localStorageCapacityIsolation: false
protectKernelDefaults: false
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization:
  mode: AlwaysAllow
resolvConf: %[3]s
clusterDomain: cluster.local
clusterDNS: [%[4]s]
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "1Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
syncFrequency: 5s
nodeStatusUpdateFrequency: 5s
shutdownGracePeriod: 0s
`, n.sock, n.opts.IP, filepath.Join(n.dir, "resolv.conf"), strings.Join(n.opts.ClusterDNS, ", "))
}
