package e2enode

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// floor is a node's own listing of the rules verify reads there, timed
// alone, each the best of three: by verify's route, pods/exec into the
// node's kube-proxy Pod (kubectl exec: a process started as verify's is,
// then the API server, the kubelet, the runtime), and in the node's
// network namespace with nothing between. What verify takes beyond the
// first is its own work: the API's reads, the plans, the parsing and the
// judging; beyond the second, the exec's route too.
type floor struct {
	exec, netns           time.Duration
	execBytes, netnsBytes int // what the listing printed each way
}

// floorListing is the command listing what verify's rule reader
// (pkg/verify/proxyread) reads of a node past 4 ports, one process as
// its exec's script runs them: in nftables mode the kube-proxy table of
// the ip family; in iptables mode iptables-save's nat table and its
// filter table (KUBE-SERVICES' no-endpoint rules). IPv4 only, as the
// benchmark's Services.
func floorListing(mode string) []string {
	switch mode {
	case "nftables":
		return []string{"nft", "list", "table", "ip", "kube-proxy"}
	case "iptables":
		return []string{"sh", "-c", "iptables-save -t nat && iptables-save -t filter"}
	}
	return nil
}

// nodeFloor measures node's floor, each listing within timeout. The
// image's nft and iptables are the host's (kubeproxy_image_test.go), so
// that in the network namespace the same binaries list the same tables:
// nsenter into kube-proxy's, the host network's of its node.
func nodeFloor(b *testing.B, node, mode string, proxy corev1.Pod, timeout time.Duration) floor {
	b.Helper()
	argv := floorListing(mode)
	if argv == nil {
		b.Fatalf("node %s: no listing for kube-proxy's mode %q", node, mode)
	}
	var f floor
	f.exec = bestOf3(func() {
		out := kubectlWithin(b, timeout, "", append([]string{"exec", "-n", "kube-system", proxy.Name, "--"}, argv...)...).ok(b)
		f.execBytes = len(out)
	})
	pid := strconv.Itoa(processOf(b, "kube-proxy", "--hostname-override="+node))
	f.netns = bestOf3(func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, "nsenter", append([]string{"-t", pid, "-n", "--"}, argv...)...).Output()
		if err != nil {
			var stderr []byte
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				stderr = ee.Stderr
			}
			b.Fatalf("%v in node %s's network namespace: %v: %s", argv, node, err, stderr)
		}
		f.netnsBytes = len(out)
	})
	return f
}

// bestOf3 runs f three times and returns its shortest time: on a shared
// machine the slower runs measure the neighbours.
func bestOf3(f func()) time.Duration {
	var best time.Duration
	for i := range 3 {
		start := time.Now()
		f()
		if d := time.Since(start); i == 0 || d < best {
			best = d
		}
	}
	return best
}

// ratio is a over b, 0 when b is.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return a.Seconds() / b.Seconds()
}
