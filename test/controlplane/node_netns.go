package controlplane

import (
	"os"
	"path/filepath"
	"strings"
)

// nodeNamespaces are an Own node's network and mount namespaces, kept by
// bind mounts of their files (unshare --net=FILE, --mount=FILE) in a private
// tmpfs of the node's directory: a mount namespace's file may only be bound
// on a mount that does not propagate. They end with the caller's mount
// namespace, which holds those files, and their last process.
type nodeNamespaces struct {
	net, mnt string
}

// newNodeNamespaces makes the namespaces and links the new network to the
// caller's with a veth pair: there, a route to ip and to podCIDR through it;
// in the node's, ip on eth0 and everything else through gateway (the API
// server's address, the caller's node). Both forward, as a node's Pods'
// traffic crosses them.
func newNodeNamespaces(nodeDir, ip, gateway, podCIDR string) (*nodeNamespaces, error) {
	dir := filepath.Join(nodeDir, "ns")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ns := &nodeNamespaces{net: filepath.Join(dir, "net"), mnt: filepath.Join(dir, "mnt")}
	if err := run([][]string{{"mount", "-t", "tmpfs", "tmpfs", dir}, {"mount", "--make-private", dir}}); err != nil {
		return nil, err
	}
	for _, f := range []string{ns.net, ns.mnt} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			return nil, err
		}
	}
	// The host side's name from the node's address: interface names are
	// at most 15 bytes.
	veth := "veth-" + ip[strings.LastIndex(ip, ".")+1:]
	enterNet := []string{"nsenter", "--net=" + ns.net, "--"}
	cmds := [][]string{
		{"unshare", "--net=" + ns.net, "true"},
		{"unshare", "--mount=" + ns.mnt, "--propagation", "private", "true"},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns.net},
		{"ip", "link", "set", veth, "up"},
		{"ip", "route", "add", ip + "/32", "dev", veth, "src", gateway},
		{"ip", "route", "add", podCIDR, "via", ip, "dev", veth, "src", gateway},
		{"sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"},
	}
	for _, c := range [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", ip + "/32", "dev", "eth0"},
		{"ip", "link", "set", "eth0", "up"},
		{"ip", "route", "add", gateway + "/32", "dev", "eth0", "src", ip},
		{"ip", "route", "add", "default", "via", gateway, "dev", "eth0", "src", ip},
		{"sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"},
	} {
		cmds = append(cmds, append(append([]string(nil), enterNet...), c...))
	}
	return ns, run(cmds)
}

// enter is the command prefix that runs a command in the namespaces.
func (ns *nodeNamespaces) enter() []string {
	return []string{"nsenter", "--net=" + ns.net, "--mount=" + ns.mnt, "--"}
}
