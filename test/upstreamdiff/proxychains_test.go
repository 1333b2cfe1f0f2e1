package upstreamdiff

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	sysctltest "k8s.io/component-helpers/node/util/sysctl/testing"
	"k8s.io/kubernetes/pkg/proxy/iptables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
)

var chainCases = flag.Int("proxy-chain-cases", 500, "random cases of TestProxyChainsMatchIptablesProxier")

// errNoNetns skips the test where no network namespace of its own can be
// made: kube-proxy's proxier then talks netlink (conntrack, nfacct) to the
// host's kernel, which a test must not touch.
var errNoNetns = errors.New("cannot make a network namespace")

// TestProxyChainsMatchIptablesProxier runs kube-proxy's iptables proxier
// (on a fake iptables) over random inputs and requires that the nat
// table's KUBE-SVC-, KUBE-SVL-, KUBE-EXT- and KUBE-SEP- chains be exactly
// those pkg/verify/proxyexpect derives, each service chain jumping to the
// KUBE-SEP- chains of the expected Cluster or Local endpoints. It holds the
// chain names and the expected set to the proxier's own rules at once.
// The proxier runs on a thread in a network namespace of its own, so its
// conntrack and nfacct calls reach no host state.
func TestProxyChainsMatchIptablesProxier(t *testing.T) {
	quietKlog(t)
	done := make(chan error, 1)
	var report string
	go func() {
		// Never unlocked: the thread ends with the goroutine, and the
		// namespace with it.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("%w: %v", errNoNetns, err)
			return
		}
		var err error
		report, err = runChainCases()
		done <- err
	}()
	err := <-done
	if errors.Is(err, errNoNetns) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report)
}

func runChainCases() (string, error) {
	start, ran, chains := time.Now(), 0, 0
	for i := 0; i < *chainCases; i++ {
		s := *seed + int64(i)
		in := randomProxyInput(s)
		if !determinate(in) {
			continue
		}
		for _, fam := range families {
			want := oursChains(in, fam)
			if strings.Contains(want, "<nil>") {
				continue // an address that is no IP: iptables-restore would refuse the rule
			}
			got, err := iptablesChains(in, fam)
			if err != nil {
				return "", fmt.Errorf("seed %d: %v", s, err)
			}
			if got != want {
				return "", fmt.Errorf("seed %d %s: chains differ\n%s\n--- ours\n%s--- kube-proxy\n%s", s, fam, describe(in), want, got)
			}
			ran++
			chains += strings.Count(got, "\n")
		}
	}
	return fmt.Sprintf("%d proxier syncs, %d chains, in %s", ran, chains, time.Since(start).Round(time.Millisecond)), nil
}

// iptablesChains syncs a fresh iptables proxier of the family once with
// the input, as kube-proxy does at start, and renders its service chains.
func iptablesChains(in proxyInput, fam corev1.IPFamily) (string, error) {
	ipt, nodeIP := iptablestest.NewFake(), net.ParseIP("192.0.2.200")
	if fam == corev1.IPv6Protocol {
		ipt, nodeIP = iptablestest.NewIPv6Fake(), net.ParseIP("2001:db8::200")
	}
	p, err := iptables.NewProxier(context.Background(), fam, ipt, sysctltest.NewFake(), time.Hour, 0, false, false, 14,
		proxyutil.NewNoOpLocalDetector(), in.node.Name, nodeIP, nil, nil, nil, false)
	if err != nil {
		return "", err
	}
	topology := map[string]string{}
	if in.node.Zone != "" {
		topology[corev1.LabelTopologyZone] = in.node.Zone
	}
	p.OnTopologyChange(topology)
	svc := in.svc.DeepCopy()
	// No health check: its server would listen on the port.
	svc.Spec.HealthCheckNodePort = 0
	if _, other := svc.Labels[proxyexpect.LabelServiceProxyName]; !other && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		p.OnServiceAdd(svc)
	}
	for _, s := range in.slices {
		if _, headless := s.Labels[corev1.IsHeadlessService]; !headless {
			p.OnEndpointSliceAdd(s.DeepCopy())
		}
	}
	p.OnServiceSynced()
	p.OnEndpointSlicesSynced() // the first full sync
	nat, err := ipt.Dump.GetTable(utiliptables.TableNAT)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, c := range nat.Chains {
		name := string(c.Name)
		switch {
		case strings.HasPrefix(name, "KUBE-SVC-") || strings.HasPrefix(name, "KUBE-SVL-"):
			var to []string
			for _, r := range c.Rules {
				if r.Jump != nil && strings.HasPrefix(r.Jump.Value, "KUBE-SEP-") {
					to = append(to, r.Jump.Value)
				}
			}
			lines = append(lines, chainLine(name, to))
		case strings.HasPrefix(name, "KUBE-EXT-") || strings.HasPrefix(name, "KUBE-SEP-") || strings.HasPrefix(name, "KUBE-FW-"):
			lines = append(lines, name+"\n")
		}
	}
	return joinSorted(lines), nil
}

// oursChains renders the chains pkg/verify/proxyexpect says the family's proxier
// programs.
func oursChains(in proxyInput, fam corev1.IPFamily) string {
	var lines []string
	for _, f := range proxyexpect.For(in.svc, in.slices, in.node).Families {
		if f.Family != fam {
			continue
		}
		for _, p := range f.Ports {
			ref := proxyexpect.RefOf(in.svc, p)
			c := proxyexpect.IptablesChains(ref)
			if p.UsesCluster && len(p.Cluster) > 0 {
				lines = append(lines, chainLine(c.Cluster, sepChains(ref, p.Cluster)))
			}
			if p.UsesLocal && len(p.Local) > 0 {
				lines = append(lines, chainLine(c.Local, sepChains(ref, p.Local)))
			}
			if p.HasEndpoints && p.ExternallyAccessible {
				lines = append(lines, c.External+"\n")
			}
			for _, ep := range p.Reachable {
				lines = append(lines, proxyexpect.IptablesEndpointChain(ref, ep)+"\n")
			}
		}
	}
	return joinSorted(lines)
}

func sepChains(ref proxyexpect.PortRef, eps []proxyexpect.Endpoint) []string {
	var out []string
	for _, ep := range eps {
		out = append(out, proxyexpect.IptablesEndpointChain(ref, ep))
	}
	return out
}

func chainLine(name string, to []string) string {
	sort.Strings(to)
	return fmt.Sprintf("%s -> %v\n", name, to)
}

func joinSorted(lines []string) string {
	sort.Strings(lines)
	return strings.Join(lines, "")
}
