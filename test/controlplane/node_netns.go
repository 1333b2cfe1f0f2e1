package controlplane

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// nodeNamespaces are an Own node's network and mount namespaces, held by a
// process that sleeps in them (unshare --net --mount); the node's daemons
// and commands enter them by its PID. They end with it (Stop) or with the
// caller's PID namespace.
type nodeNamespaces struct {
	holder *process
	pid    string
}

// newNodeNamespaces makes the namespaces and links the new network to the
// caller's with a veth pair: there, a route to ip and to podCIDR through it;
// in the node's, ip on eth0, and routes to gateway (the API server's
// address, the caller's node) and through it to peerCIDRs (the other
// nodes' Pods). No default route, either way: a ClusterIP is reachable
// only through the node's own kube-proxy rules, never the other node's.
// Both forward, as a node's Pods' traffic crosses them.
func newNodeNamespaces(nodeDir, ip, gateway, podCIDR string, peerCIDRs []string) (*nodeNamespaces, error) {
	holder, err := startProcess(nodeDir, "namespaces", "unshare", "--net", "--mount", "--propagation", "private", "--", "sleep", "infinity")
	if err != nil {
		return nil, err
	}
	ns := &nodeNamespaces{holder: holder, pid: strconv.Itoa(holder.cmd.Process.Pid)}
	if err := ns.waitUnshared(); err != nil {
		ns.stop()
		return nil, err
	}
	// The host side's name from the node's address: interface names are
	// at most 15 bytes.
	veth := "veth-" + ip[strings.LastIndex(ip, ".")+1:]
	cmds := [][]string{
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns.pid},
		{"ip", "link", "set", veth, "up"},
		{"ip", "route", "add", ip + "/32", "dev", veth, "src", gateway},
		{"ip", "route", "add", podCIDR, "via", ip, "dev", veth, "src", gateway},
		{"sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"},
	}
	inside := [][]string{
		{"ip", "link", "set", "lo", "up"},
		{"ip", "addr", "add", ip + "/32", "dev", "eth0"},
		{"ip", "link", "set", "eth0", "up"},
		{"ip", "route", "add", gateway + "/32", "dev", "eth0", "src", ip},
		{"sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"},
	}
	for _, cidr := range peerCIDRs {
		inside = append(inside, []string{"ip", "route", "add", cidr, "via", gateway, "dev", "eth0", "src", ip})
	}
	for _, c := range inside {
		cmds = append(cmds, append(ns.enter(), c...))
	}
	if err := run(cmds); err != nil {
		ns.stop()
		return nil, err
	}
	return ns, nil
}

// waitUnshared waits until the holder is in namespaces other than the
// caller's: unshare makes them between its start and its exec of sleep.
func (ns *nodeNamespaces) waitUnshared() error {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ns.holder.exited() {
			return fmt.Errorf("unshare --net --mount exited:\n%s", tail(ns.holder.log.Name(), 2000))
		}
		netNS, _ := os.Readlink("/proc/" + ns.pid + "/ns/net")
		mntNS, _ := os.Readlink("/proc/" + ns.pid + "/ns/mnt")
		if mntNS != "" && mntNS != self && netNS != "" {
			if selfNet, _ := os.Readlink("/proc/self/ns/net"); netNS != selfNet {
				return nil
			}
		}
	}
	return fmt.Errorf("unshare --net --mount: no namespaces of its own after 10s")
}

// enter is the command prefix that runs a command in the namespaces.
func (ns *nodeNamespaces) enter() []string {
	return []string{"nsenter", "--target", ns.pid, "--net", "--mount", "--"}
}

func (ns *nodeNamespaces) stop() {
	if ns != nil {
		ns.holder.stop(-1)
	}
}
