package e2e

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The envelope's shape, at every size: 15 Pods a Service, 100 Services a
// namespace and 30 Pods a Node, so 150,000 Pods are 10,000 Services in 100
// namespaces on 5,000 Nodes (SIG Scalability's top). The mix: every 20th
// Pod not ready; every 4th Service with a second named port (metrics);
// every 10th dual-stack, its Pods with an IPv6 address too.
const (
	envelopePerService = 15
	envelopePerNS      = 100 // Services
	envelopePerNode    = 30  // Pods
)

// envelopeLadder is the sizes to run, in Pods: ENVELOPE_LADDER
// (comma-separated), or ENVELOPE_PODS for one size, or the default ladder.
func envelopeLadder(b *testing.B) []envelopeShape {
	spec := cmp.Or(os.Getenv("ENVELOPE_LADDER"), os.Getenv("ENVELOPE_PODS"), "10000,50000,100000,150000")
	var out []envelopeShape
	for _, f := range strings.Split(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < envelopePerService {
			b.Fatalf("envelope size %q: want a number of Pods, at least %d (ENVELOPE_LADDER=10000,50000 or ENVELOPE_PODS=10000)", f, envelopePerService)
		}
		out = append(out, newEnvelopeShape(n))
	}
	return out
}

// envelopeShape is one size of the envelope.
type envelopeShape struct {
	pods, services, namespaces, nodes int
}

func newEnvelopeShape(pods int) envelopeShape {
	services := pods / envelopePerService
	return envelopeShape{pods: services * envelopePerService, services: services,
		namespaces: max(1, services/envelopePerNS), nodes: max(1, pods/envelopePerNode)}
}

func (e envelopeShape) String() string {
	return fmt.Sprintf("%d Pods in %d Services (%d each) across %d namespaces on %d Nodes",
		e.pods, e.services, envelopePerService, e.namespaces, e.nodes)
}

func (e envelopeShape) ns(svc int) string   { return fmt.Sprintf("env-%02d", svc%e.namespaces) }
func (e envelopeShape) name(svc int) string { return fmt.Sprintf("svc-%05d", svc) }

func (envelopeShape) multiPort(svc int) bool { return svc%4 == 1 }
func (envelopeShape) dualStack(svc int) bool { return svc%10 == 3 }
func (envelopeShape) ready(svc, i int) bool  { return (svc*envelopePerService+i)%20 != 19 }

// service is Service svc: a named target port, a second one on every 4th,
// both families on every 10th.
func (e envelopeShape) service(svc int) *corev1.Service {
	return service(e.ns(svc), e.name(svc), func(s *corev1.Service) {
		if e.multiPort(svc) {
			s.Spec.Ports = append(s.Spec.Ports, controlplane.ServicePort("metrics", 9090, intstr.FromString("metrics")))
		}
		if e.dualStack(svc) {
			policy := corev1.IPFamilyPolicyRequireDualStack
			s.Spec.IPFamilyPolicy = &policy
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
		}
	})
}

// pod is Pod i of Service svc: on Node (its global index mod Nodes), with
// an IPv4 address of its own in 10.100.0.0/14 and, in a dual-stack
// Service, an IPv6 one in fd00:10:244::/96.
func (e envelopeShape) pod(svc, i int) controlplane.PodSpec {
	g := svc*envelopePerService + i
	p := podSpec(e.name(svc), i, 0)
	p.Labels = map[string]string{"app": e.name(svc), "env": "envelope"}
	p.Node = fmt.Sprintf("node-%04d", g%e.nodes)
	p.IPs = []string{fmt.Sprintf("10.%d.%d.%d", 100+g/62500, g/250%250, g%250+1)}
	if e.dualStack(svc) {
		v6 := netip.MustParseAddr("fd00:10:244::").As16()
		binary.BigEndian.PutUint32(v6[12:], uint32(g+1))
		p.IPs = append(p.IPs, netip.AddrFrom16(v6).String())
	}
	p.Ready = e.ready(svc, i)
	if e.multiPort(svc) {
		p.Ports = append(p.Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP})
	}
	return p
}

// readyEndpoints is how many ready endpoints a manager publishes for the
// whole envelope: each ready Pod once per family of its Service.
func (e envelopeShape) readyEndpoints() int {
	n := 0
	for s := range e.services {
		for i := range envelopePerService {
			if e.ready(s, i) {
				n++
				if e.dualStack(s) {
					n++
				}
			}
		}
	}
	return n
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// seedEnvelope creates the Nodes (in three zones), namespaces, Services and
// ready Pods, through a client without rate limit.
func seedEnvelope(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape) {
	ctx := context.Background()
	fast, err := cp.Unthrottled()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := parallel(e.nodes, 16, func(i int) error {
		return fast.Node(ctx, controlplane.NodeSpec{Name: fmt.Sprintf("node-%04d", i), Zone: fmt.Sprintf("zone-%c", 'a'+i%3)})
	}); err != nil {
		b.Fatalf("seeding %d Nodes: %v", e.nodes, err)
	}
	for n := range e.namespaces {
		if err := fast.Namespace(ctx, e.ns(n)); err != nil {
			b.Fatalf("seeding namespaces: %v", err)
		}
	}
	if err := parallel(e.services, 16, func(s int) error {
		_, err := fast.Service(ctx, e.service(s))
		return err
	}); err != nil {
		b.Fatalf("seeding %d Services: %v", e.services, err)
	}
	for n := range e.namespaces {
		var specs []controlplane.PodSpec
		for s := n; s < e.services; s += e.namespaces {
			for i := range envelopePerService {
				specs = append(specs, e.pod(s, i))
			}
		}
		if err := fast.Pods(ctx, e.ns(n), specs, 32); err != nil {
			b.Fatalf("seeding Pods of namespace %s (%d of %d namespaces done, %v in): %v", e.ns(n), n, e.namespaces, time.Since(start).Round(time.Second), err)
		}
	}
	b.Logf("seeded %s in %v", e, time.Since(start).Round(time.Second))
}

// controlPlaneProcesses finds cp's etcd, kube-apiserver and
// kube-controller-manager by their command lines (they name cp.Dir).
func controlPlaneProcesses(cp *controlplane.ControlPlane) map[string]int {
	out := map[string]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || !strings.Contains(string(raw), cp.Dir) {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		if name := filepath.Base(args[0]); name == "etcd" || name == "kube-apiserver" || name == "kube-controller-manager" {
			out[name] = pid
		}
	}
	return out
}

// machineState says what may have given out: which control-plane
// processes run and their resident memory, and the memory left.
func machineState(cp *controlplane.ControlPlane) string {
	procs := controlPlaneProcesses(cp)
	var parts []string
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if pid, ok := procs[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %d MiB", name, rssKiB(pid)/1024))
		} else {
			parts = append(parts, name+" not running")
		}
	}
	parts = append(parts, fmt.Sprintf("memory available %d MiB", memAvailableKiB()/1024))
	return strings.Join(parts, ", ")
}

// waitReadyCount waits until managedBy's slices publish want ready
// endpoints, as the view sees them, and returns when.
func waitReadyCount(b *testing.B, view *readyView, managedBy string, want int, limit time.Duration) time.Time {
	deadline := time.Now().Add(limit)
	for {
		view.mu.Lock()
		got := view.count(managedBy)
		view.mu.Unlock()
		if got == want {
			return time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s publishes %d ready endpoints after %v, want %d", managedBy, got, limit, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// timedCheck runs `check -A -o json` and returns its wall time; a finding
// fails the benchmark (the cluster is synced).
func timedCheck(b *testing.B, cp *controlplane.ControlPlane, services int) time.Duration {
	start := time.Now()
	cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), "--kubeconfig", cp.Kubeconfig, "check", "-A", "-o", "json")
	out, err := cmd.Output()
	took := time.Since(start)
	var r struct {
		Services int
		Findings []struct{ Namespace, Service, Kind string }
	}
	if err != nil && cmd.ProcessState.ExitCode() != 1 { // 1: findings, below
		b.Fatalf("check -A: %v\n%.2000s", err, out)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("check -A -o json: %v\n%.2000s", err, out)
	}
	if len(r.Findings) > 0 || r.Services < services {
		b.Fatalf("check -A on the synced cluster: %d Services seen (want %d), %d findings, first %+v", r.Services, services, len(r.Findings), r.Findings)
	}
	return took
}
