package upstreamdiff

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	sysctltest "k8s.io/component-helpers/node/util/sysctl/testing"
	"k8s.io/kubernetes/pkg/proxy/iptables"
	"k8s.io/kubernetes/pkg/proxy/nftables"
	proxyutil "k8s.io/kubernetes/pkg/proxy/util"
	utiliptables "k8s.io/kubernetes/pkg/util/iptables"
	iptablestest "k8s.io/kubernetes/pkg/util/iptables/testing"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/proxyread"
)

var readCaseCount = flag.Int("proxy-read-cases", 40, "random cases of the TestProxyRead tests")

// inNetns runs f on a thread in a network namespace of its own (and the
// processes it starts with it), skipping the test where none can be made.
func inNetns(t *testing.T, f func() (string, error)) {
	t.Helper()
	quietKlog(t)
	done := make(chan error, 1)
	var report string
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("%w: %v", errNoNetns, err)
			return
		}
		var err error
		report, err = f()
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

// readCase is one random input's wants of one family and what the reading
// of them must be, from proxyexpect.
type readCase struct {
	in    proxyInput
	fam   corev1.IPFamily
	wants []proxyread.Want
	exp   string
}

// readCases are the random inputs whose every address is an IP (kube-proxy
// would refuse the others' rules) and whose result is determinate.
func readCases() []readCase {
	var out []readCase
	for i := 0; i < *readCaseCount; i++ {
		in := randomProxyInput(*seed + int64(i))
		if !determinate(in) {
			continue
		}
		if i%3 == 0 {
			// Session affinity: the service chains jump to endpoint
			// chains in both modes, read in a second exec.
			in.svc = in.svc.DeepCopy()
			in.svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			in.svc.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(60))}}
		}
		for _, fam := range families {
			c := readCase{in: in, fam: fam}
			usable := true
			for _, f := range proxyexpect.For(in.svc, in.slices, in.node).Families {
				if f.Family != fam {
					continue
				}
				for _, p := range f.Ports {
					usable = usable && addressesOf(fam, p.Reachable)
					c.wants = append(c.wants, proxyread.Want{Ref: proxyexpect.RefOf(in.svc, p), Family: string(fam), ClusterIP: f.ClusterIP, Port: p})
				}
			}
			if usable {
				out = append(out, c)
			}
		}
	}
	return out
}

// addressesOf: every endpoint's IP is an address of the family, as
// iptables-restore and nft require of the rules kube-proxy writes.
func addressesOf(fam corev1.IPFamily, eps []proxyexpect.Endpoint) bool {
	for _, e := range eps {
		ip, err := netip.ParseAddr(e.IP)
		if err != nil || ip.Is4() != (fam == corev1.IPv4Protocol) || ip.Is4In6() {
			return false
		}
	}
	return true
}

// expectText renders what the reading of c's wants must show, by the
// rules of kube-proxy's proxiers (the same in both modes): a policy chain
// exists when the port uses the policy and it has endpoints; the cluster
// IP dispatches to the internal policy's chain when that has endpoints,
// and otherwise the port is a no-endpoint entry, rejected when it has no
// endpoint anywhere and dropped when only local ones lack.
func expectText(c readCase, mode proxyread.Mode) string {
	var b strings.Builder
	itpLocal := c.in.svc.Spec.InternalTrafficPolicy != nil && *c.in.svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
	for _, w := range c.wants {
		p := w.Port
		cluster, local := proxyexpect.IptablesChains(w.Ref).Cluster, proxyexpect.IptablesChains(w.Ref).Local
		if mode == proxyread.ModeNftables {
			cluster, local = proxyexpect.NftablesChains(w.Ref).Cluster, proxyexpect.NftablesChains(w.Ref).Local
		}
		internal, internalEPs := cluster, p.Cluster
		if itpLocal {
			internal, internalEPs = local, p.Local
		}
		fmt.Fprintf(&b, "port %s/%s %d:", p.Name, p.Protocol, p.Port)
		switch {
		case p.HasEndpoints && len(internalEPs) > 0:
			fmt.Fprintf(&b, " dispatch->%s", internal)
		case p.HasEndpoints:
			b.WriteString(" no-endpoints:drop")
		default:
			b.WriteString(" no-endpoints:reject")
		}
		b.WriteString("\n")
		writeChain(&b, cluster, p.UsesCluster && len(p.Cluster) > 0, eps(p.Cluster))
		writeChain(&b, local, p.UsesLocal && len(p.Local) > 0, eps(p.Local))
	}
	return b.String()
}

func eps(e []proxyexpect.Endpoint) []string {
	var out []string
	for _, x := range e {
		out = append(out, x.String())
	}
	return out
}

func writeChain(b *strings.Builder, name string, present bool, eps []string) {
	if present {
		fmt.Fprintf(b, "  %s %v\n", name, eps)
	}
}

// readingText renders a reading as expectText does, anything unreadable
// or inconsistent spelled out so that it differs.
func readingText(r proxyread.Reading) string {
	var b strings.Builder
	for _, ps := range r.Ports {
		p := ps.Want.Port
		fmt.Fprintf(&b, "port %s/%s %d:", p.Name, p.Protocol, p.Port)
		if ps.Dispatch {
			fmt.Fprintf(&b, " dispatch->%s", ps.DispatchTarget)
		}
		if ps.NoEndpoints {
			fmt.Fprintf(&b, " no-endpoints:%s", ps.NoEndpointsVerdict)
		}
		if ps.Unreadable != "" {
			fmt.Fprintf(&b, " UNREADABLE %s", ps.Unreadable)
		}
		b.WriteString("\n")
		for _, ch := range []proxyread.Chain{ps.Cluster, ps.Local} {
			if ch.Unreadable != "" {
				fmt.Fprintf(&b, "  %s UNREADABLE %s\n", ch.Name, ch.Unreadable)
			}
			writeChain(&b, ch.Name, ch.Present, ch.Endpoints)
		}
	}
	return b.String()
}

// checkReading reads c's wants through exec and holds the reading to
// expectText, and the execs to two at most.
func checkReading(c readCase, reader proxyread.Reader, mode proxyread.Mode, exec proxyread.Exec) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := reader.Read(ctx, exec, c.wants)
	if err != nil {
		return fmt.Errorf("%s: %v", c.fam, err)
	}
	if got, want := readingText(r), expectText(c, mode); got != want {
		return fmt.Errorf("%s: the reading differs\n%s\n--- expected\n%s--- read\n%s", c.fam, describe(c.in), want, got)
	}
	if r.Execs > 2 {
		return fmt.Errorf("%s: %d execs", c.fam, r.Execs)
	}
	return nil
}

// syncIptables runs a fresh iptables proxier of the family over the input
// once, as kube-proxy does at start, and returns its fake iptables.
func syncIptables(in proxyInput, fam corev1.IPFamily) (*iptablestest.FakeIPTables, error) {
	ipt, nodeIP := iptablestest.NewFake(), net.ParseIP("192.0.2.200")
	if fam == corev1.IPv6Protocol {
		ipt, nodeIP = iptablestest.NewIPv6Fake(), net.ParseIP("2001:db8::200")
	}
	p, err := iptables.NewProxier(context.Background(), fam, ipt, sysctltest.NewFake(), time.Hour, 0, false, false, 14,
		proxyutil.NewNoOpLocalDetector(), in.node.Name, nodeIP, nil, nil, nil, false)
	if err != nil {
		return nil, err
	}
	feed(p, in)
	return ipt, nil
}

// proxyHandler is what both proxiers take events through.
type proxyHandler interface {
	OnTopologyChange(map[string]string)
	OnServiceAdd(*corev1.Service)
	OnServiceSynced()
	OnEndpointSliceAdd(*discoveryv1.EndpointSlice)
	OnEndpointSlicesSynced()
}

// feed gives the proxier the input and syncs it once (the first full sync).
func feed(p proxyHandler, in proxyInput) {
	topology := map[string]string{}
	if in.node.Zone != "" {
		topology[corev1.LabelTopologyZone] = in.node.Zone
	}
	p.OnTopologyChange(topology)
	svc := in.svc.DeepCopy()
	svc.Spec.HealthCheckNodePort = 0 // its server would listen on the port
	if _, other := svc.Labels[proxyexpect.LabelServiceProxyName]; !other && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		p.OnServiceAdd(svc)
	}
	for _, s := range in.slices {
		if _, headless := s.Labels[corev1.IsHeadlessService]; !headless {
			p.OnEndpointSliceAdd(s.DeepCopy())
		}
	}
	p.OnServiceSynced()
	p.OnEndpointSlicesSynced()
}

// fakeIptablesExec answers the iptables reader's script from a fake
// iptables, as `iptables -S CHAIN` prints a chain: "-N CHAIN" and its
// rules as the proxier wrote them; and `iptables-save -t TABLE` as the
// fake saves a table.
func fakeIptablesExec(ipt *iptablestest.FakeIPTables) proxyread.Exec {
	return func(_ context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
		if len(argv) != 3 || argv[2] != proxyread.IptablesScript {
			return nil, fmt.Errorf("unexpected command %q", argv)
		}
		var out bytes.Buffer
		lines := strings.Split(strings.TrimSuffix(string(stdin), "\n"), "\n")
		nonce := lines[0]
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			var body string
			rc := 0
			if strings.HasSuffix(f[1], "-save") && len(f) == 3 {
				var buf bytes.Buffer
				if err := ipt.SaveInto(utiliptables.Table(f[2]), &buf); err != nil {
					return nil, err
				}
				body = buf.String()
			} else {
				body, rc = fakeListing(ipt, f[2], f[3])
			}
			fmt.Fprintf(&out, "@@%s begin %s\n%s\n@@%s end %s %d\n", nonce, f[0], body, nonce, f[0], rc)
		}
		if int64(out.Len()) > limit {
			return out.Bytes()[:limit], nil
		}
		return out.Bytes(), nil
	}
}

func fakeListing(ipt *iptablestest.FakeIPTables, table, chain string) (string, int) {
	c, err := ipt.Dump.GetChain(utiliptables.Table(table), utiliptables.Chain(chain))
	if err != nil || c == nil {
		return "iptables: No chain/target/match by that name.", 1
	}
	lines := []string{"-N " + chain}
	for _, r := range c.Rules {
		lines = append(lines, r.Raw)
	}
	return strings.Join(lines, "\n"), 0
}

// TestProxyReadIptablesProxier runs kube-proxy's iptables proxier (on a
// fake iptables) over random inputs, reads each port's rules through the
// iptables reader from the fake's chains, and requires the reading to be
// what proxyexpect computes: dispatch and its chain, no-endpoint verdict,
// each policy chain and the endpoints its KUBE-SEP- chains DNAT to; both
// chain by chain and from the tables saved whole.
func TestProxyReadIptablesProxier(t *testing.T) {
	inNetns(t, func() (string, error) {
		n := 0
		for _, c := range readCases() {
			ipt, err := syncIptables(c.in, c.fam)
			if err != nil {
				return "", err
			}
			for _, reader := range []proxyread.Iptables{{Targeted: 100}, {Targeted: -1}} {
				if err := checkReading(c, reader, proxyread.ModeIptables, fakeIptablesExec(ipt)); err != nil {
					return "", fmt.Errorf("%+v: %v", reader, err)
				}
			}
			n++
		}
		return fmt.Sprintf("%d readings", n), nil
	})
}

// localExec runs argv here, bounded as the node's exec is.
func localExec(ctx context.Context, argv []string, stdin []byte, limit int64) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	b := out.Bytes()
	if int64(len(b)) > limit {
		b = b[:limit]
	}
	return b, err
}

// run runs a command here with stdin, returning its combined output.
func run(stdin string, argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}

// TestProxyReadRealIptables loads the rules the iptables proxier wrote
// into the real iptables of a network namespace of its own
// (iptables-restore of the fake's nat and filter tables) and reads them
// back with the reader's exact script through /bin/sh and the real
// iptables -S, and the real iptables-save: the commands and the parser
// against the real tool.
func TestProxyReadRealIptables(t *testing.T) {
	for _, bin := range []string{"iptables", "ip6tables", "iptables-restore", "ip6tables-restore", "iptables-save", "ip6tables-save", "sh"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s here: %v", bin, err)
		}
	}
	inNetns(t, func() (string, error) {
		n := 0
		for _, c := range readCases() {
			ipt, err := syncIptables(c.in, c.fam)
			if err != nil {
				return "", err
			}
			restore := "iptables-restore"
			if c.fam == corev1.IPv6Protocol {
				restore = "ip6tables-restore"
			}
			for _, table := range []utiliptables.Table{utiliptables.TableNAT, utiliptables.TableFilter} {
				var buf bytes.Buffer
				if err := ipt.SaveInto(table, &buf); err != nil {
					return "", err
				}
				if _, err := run(ownChains(buf.String()), restore, "-w", "5"); err != nil {
					return "", err
				}
			}
			for _, reader := range []proxyread.Iptables{{Targeted: 100}, {Targeted: -1}} {
				if err := checkReading(c, reader, proxyread.ModeIptables, localExec); err != nil {
					return "", fmt.Errorf("%+v: %v", reader, err)
				}
			}
			n++
		}
		return fmt.Sprintf("%d readings through the real iptables", n), nil
	})
}

// ownChains drops the rules of the built-in chains from an
// iptables-restore input: the fake writes their jumps (EnsureRule) with
// comments unquoted, and the reader reads none of them.
func ownChains(save string) string {
	var out []string
	for _, l := range strings.Split(save, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestProxyReadRealNftables runs kube-proxy's nftables proxier against the
// real nft in a network namespace of its own over random inputs, and reads
// each port's rules back through the nftables reader's exact script and
// the real nft: the reading must be what proxyexpect computes.
func TestProxyReadRealNftables(t *testing.T) {
	for _, bin := range []string{"nft", "sh"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s here: %v", bin, err)
		}
	}
	inNetns(t, func() (string, error) {
		n := 0
		for _, c := range readCases() {
			nodeIP := net.ParseIP("192.0.2.200")
			if c.fam == corev1.IPv6Protocol {
				nodeIP = net.ParseIP("2001:db8::200")
			}
			if _, err := run("", "nft", "flush", "ruleset"); err != nil {
				return "", err
			}
			p, err := nftables.NewProxier(context.Background(), c.fam, time.Hour, 0, false, 14,
				proxyutil.NewNoOpLocalDetector(), c.in.node.Name, nodeIP, nil, nil, nil, false)
			if err != nil {
				return "", fmt.Errorf("%w: the nftables proxier: %v", errNoNetns, err)
			}
			feed(p, c.in)
			for _, reader := range []proxyread.Nftables{{Targeted: 100}, {Targeted: -1}} {
				if err := checkReading(c, reader, proxyread.ModeNftables, localExec); err != nil {
					return "", fmt.Errorf("%+v: %v", reader, err)
				}
			}
			n++
		}
		return fmt.Sprintf("%d readings through the real nft", n), nil
	})
}
