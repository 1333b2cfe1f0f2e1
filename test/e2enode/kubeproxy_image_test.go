package e2enode

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kubectl-slices/kubectl-slices/test/ociimage"
)

// kubeProxyImage is kube-proxy built here (hack/build-node.sh) with the
// host's Debian nft, iptables and netbase.
const kubeProxyImage = "localhost/kube-proxy:e2e"

// netbaseFiles are Debian's netbase package, which upstream's image
// carries twice over: registry.k8s.io/kube-proxy is built FROM
// kubernetes/release's distroless-iptables, whose base,
// gcr.io/distroless/base-debian12, installs netbase (distroless's
// static/config.bzl), and whose iptables staging copies the files of
// every package iptables depends on, netbase among them. What matters is
// /etc/protocols: without it nft lists a service-ips key's protocol as
// "6", and kube-proxy's nftables mode, reading its map back when it
// starts, takes each "6" element for a stale one beside the "tcp" one it
// adds and deletes it in the same transaction: the map ends empty, every
// Service unreachable on the node until kube-proxy restarts again. No
// nsswitch.conf: without one glibc reads protocols and services from files.
var netbaseFiles = []string{"/etc/protocols", "/etc/services", "/etc/ethertypes", "/etc/rpc"}

// xtablesDir holds iptables' match and target modules, loaded with dlopen
// (Debian's build looks there).
const xtablesDir = "/usr/lib/x86_64-linux-gnu/xtables"

// iptablesCommands are the names kube-proxy's iptables mode runs (IPv4 and
// IPv6, as it probes both), each a link to the nft-backed multi-call binary.
// Why nft-backed and not legacy: the host's iptables (Debian's default
// alternative) is nft-backed, as is the kubelet's hint chain; kube-proxy's
// rules belong in the same backend as the host's, or two sets of tables
// would both hook the same packets. The kernel has both, only one is right.
var iptablesCommands = []string{"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore",
	"iptables-nft", "iptables-nft-save", "iptables-nft-restore", "ip6tables-nft", "ip6tables-nft-save", "ip6tables-nft-restore"}

// kubeProxyImageSpec is the kube-proxy image: the static kube-proxy, and
// Debian's nft, xtables-nft-multi (iptables) with its modules, and dash as
// /bin/sh (for a test's script through kubectl exec), each with the shared
// libraries and dynamic loader ldd finds for it, and netbase's files.
// Root, as kubeadm's kube-proxy runs (privileged, in the host's network
// namespace).
func kubeProxyImageSpec(nodeBin string) (ociimage.Image, error) {
	files := map[string]string{
		"/usr/local/bin/kube-proxy":   filepath.Join(nodeBin, "kube-proxy"),
		"/usr/sbin/nft":               "/usr/sbin/nft",
		"/usr/sbin/xtables-nft-multi": "/usr/sbin/xtables-nft-multi",
		"/usr/bin/dash":               "/bin/dash",
	}
	modules, err := filepath.Glob(filepath.Join(xtablesDir, "*.so"))
	if err != nil || len(modules) == 0 {
		return ociimage.Image{}, fmt.Errorf("no iptables modules in %s (Debian's iptables package): %v", xtablesDir, err)
	}
	for _, f := range netbaseFiles {
		files[f] = f
	}
	dynamic := []string{"/usr/sbin/nft", "/usr/sbin/xtables-nft-multi", "/bin/dash"}
	for _, m := range modules {
		files[m] = m
		dynamic = append(dynamic, m)
	}
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			return ociimage.Image{}, fmt.Errorf("kube-proxy image: %w (hack/node-prereqs.sh installs nftables, iptables and netbase)", err)
		}
	}
	libs, err := ociimage.Libraries(dynamic...)
	if err != nil {
		return ociimage.Image{}, err
	}
	for in, host := range libs {
		files[in] = host
	}
	links := map[string]string{"/bin/sh": "/usr/bin/dash"}
	for _, c := range iptablesCommands {
		links["/usr/sbin/"+c] = "xtables-nft-multi"
	}
	return ociimage.Image{Name: kubeProxyImage, Files: files, Symlinks: links,
		Entrypoint: []string{"/usr/local/bin/kube-proxy"},
		Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}}, nil
}
