package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The envelope's shape at full size: 100,000 Pods in 5,000 Services of 20
// Pods across 50 namespaces on 1,000 Nodes. ENVELOPE_PODS scales it,
// keeping 20 Pods per Service, 100 Services per namespace and 100 Pods per
// Node (10,000 Pods: 500 Services, 5 namespaces, 100 Nodes).
const (
	envelopePerService = 20
	envelopePerNS      = 100 // Services
	envelopePerNode    = 100 // Pods
)

// envelopeShape is one size of the envelope.
type envelopeShape struct {
	pods, services, namespaces, nodes int
}

func envelopeSize(b *testing.B) envelopeShape {
	pods := 100000
	if s := os.Getenv("ENVELOPE_PODS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < envelopePerService {
			b.Fatalf("ENVELOPE_PODS=%q: want a number of Pods, at least %d", s, envelopePerService)
		}
		pods = n
	}
	services := pods / envelopePerService
	return envelopeShape{pods: services * envelopePerService, services: services,
		namespaces: max(1, services/envelopePerNS), nodes: max(1, pods/envelopePerNode)}
}

func (e envelopeShape) String() string {
	return fmt.Sprintf("%d Pods in %d Services (%d each) across %d namespaces on %d Nodes",
		e.pods, e.services, envelopePerService, e.namespaces, e.nodes)
}

func (e envelopeShape) ns(svc int) string   { return fmt.Sprintf("env-%02d", svc%e.namespaces) }
func (e envelopeShape) name(svc int) string { return fmt.Sprintf("svc-%04d", svc) }

// pod is Pod i of Service svc: on Node (its global index mod Nodes), with
// an IP of its own in 10.100.0.0/14.
func (e envelopeShape) pod(svc, i int) controlplane.PodSpec {
	g := svc*envelopePerService + i
	p := podSpec(e.name(svc), i, 0)
	p.Labels = map[string]string{"app": e.name(svc), "env": "envelope"}
	p.Node = fmt.Sprintf("node-%04d", g%e.nodes)
	p.IPs = []string{fmt.Sprintf("10.%d.%d.%d", 100+g/62500, g/250%250, g%250+1)}
	return p
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
		_, err := fast.Service(ctx, service(e.ns(s), e.name(s)))
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
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(l, "MemAvailable:") {
				kib, _ := strconv.Atoi(strings.Fields(l)[1])
				parts = append(parts, fmt.Sprintf("memory available %d MiB", kib/1024))
			}
		}
	}
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkEnvelope: the cluster envelope (100,000 Pods in 5,000 Services
// of 20 across 50 namespaces on 1,000 Nodes; ENVELOPE_PODS scales it) on a
// control plane of its own, in one run, one step after the other:
//
//  1. cold `sync --all -A` (no slice exists): wall time and API requests;
//  2. a no-op `sync --all -A` again: wall time and API requests (lists);
//  3. `check -A`: wall time (no finding allowed);
//  4. our slices deleted (DeleteCollection per namespace, waited out
//     through the watch), so the cluster is as before step 1; then
//     kube-controller-manager (its EndpointSlice controller only) started
//     cold: time until its slices publish every Pod ready;
//  5. `sync --watch --all -A` started cold beside it (none of our slices
//     exist): time to its caches filled and to all our slices written;
//     resident memory of both; ENVELOPE_FLIPS readiness flips, 120 by
//     default, over Pods of Services spread evenly, each timed from the status
//     write to each manager's slice update seen through a watch, and the
//     CPU of both over them; the watch is stopped;
//  6. `kubectl slices webhook` (caching every namespace): 200 Service
//     admissions in the first namespace, its handling p50/p99.
//
// What gives out (a seeding error, a process killed, a convergence that
// does not come) fails the benchmark with the control plane's processes
// and the memory left. Run with -benchtime 1x (make bench-envelope).
func BenchmarkEnvelope(b *testing.B) {
	e := envelopeSize(b)
	flips := 120
	if s, err := strconv.Atoi(os.Getenv("ENVELOPE_FLIPS")); err == nil && s >= 2 {
		flips = s
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// As in a real cluster, API Priority and Fairness is on (the shared
	// test cluster turns it off to spare the 2 cores): the plugin lifts its
	// client-side limits under it.
	cp := ownCluster(b, ctx, fairness)
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("envelope at %s; when it failed: %s", e, machineState(cp))
		}
	})
	seedEnvelope(b, cp, e)
	view := followSlices(b, cp, metav1.NamespaceAll)
	b.Logf("after seeding: %s", machineState(cp))

	for b.Loop() {
		var summary []string
		say := func(format string, args ...any) {
			line := fmt.Sprintf(format, args...)
			summary = append(summary, line)
			b.Log(line)
		}
		// 1-2: one-shot sync, cold then no-op.
		cold, coldReq, coldVerbs := runPlugin(b, cp, "sync", "--all", "-A")
		waitReadyCount(b, view, oursLabel, e.pods, time.Minute)
		resync, resyncReq, resyncVerbs := runPlugin(b, cp, "sync", "--all", "-A")
		if strings.Contains(resyncVerbs, ",") || !strings.HasPrefix(resyncVerbs, "GET ") {
			b.Errorf("the no-op resync made requests other than lists: %s", resyncVerbs)
		}
		// 3: check.
		check := timedCheck(b, cp, e.services)

		// 4: the controller, cold on the same state.
		kcmCold := controllerConvergesCold(b, cp, e, view)
		say("envelope: %s", e)
		say("cold sync --all -A: %v, %d API requests (%s); kube-controller-manager's cold convergence %v (ours %.3fx)",
			cold.Round(time.Millisecond), coldReq, coldVerbs, kcmCold.Round(time.Millisecond), cold.Seconds()/kcmCold.Seconds())
		say("no-op resync: %v, %d API requests (%s)", resync.Round(time.Millisecond), resyncReq, resyncVerbs)
		say("check -A: %v", check.Round(time.Millisecond))
		b.ReportMetric(ms(cold), "cold-sync-ms")
		b.ReportMetric(float64(coldReq), "cold-sync-requests")
		b.ReportMetric(ms(kcmCold), "kcm-cold-ms")
		b.ReportMetric(ms(resync), "resync-ms")
		b.ReportMetric(float64(resyncReq), "resync-requests")
		b.ReportMetric(ms(check), "check-ms")

		// 5: the watch loop from cold, beside the converged controller.
		watchStart := time.Now()
		w := startWatch(b, cp, cp.Kubeconfig, "sync", "--watch", "--all", "-A", "--summary-interval=0")
		w.waitLine(b, "caches filled", 10*time.Minute)
		filled := time.Since(watchStart)
		written := waitReadyCount(b, view, oursLabel, e.pods, 2*time.Minute+time.Duration(e.services)*50*time.Millisecond).Sub(watchStart)
		oursRSS, kcmRSS := rssKiB(w.cmd.Process.Pid), rssKiB(cp.ControllerManagerPID())
		say("sync --watch --all -A from cold: caches filled after %v, all slices written after %v", filled.Round(time.Millisecond), written.Round(time.Millisecond))
		say("resident memory with the cluster cached: ours %d MiB, kube-controller-manager %d MiB (%.2fx)", oursRSS/1024, kcmRSS/1024, float64(oursRSS)/float64(kcmRSS))
		b.ReportMetric(ms(filled), "watch-filled-ms")
		b.ReportMetric(ms(written), "watch-written-ms")
		b.ReportMetric(float64(oursRSS)/1024, "ours-rss-MiB")
		b.ReportMetric(float64(kcmRSS)/1024, "kcm-rss-MiB")

		rng := rand.New(rand.NewPCG(3, 4))
		var targets []flipTarget
		for k := range flips / 2 {
			s := k * e.services / (flips / 2)
			targets = append(targets, flipTarget{e.ns(s), e.pod(s, rng.IntN(envelopePerService))})
		}
		oursCPU, kcmCPU := cpuTime(w.cmd.Process.Pid), cpuTime(cp.ControllerManagerPID())
		lat := flipTimed(b, cp, view, targets)
		n := time.Duration(2 * len(targets))
		oursCPU, kcmCPU = (cpuTime(w.cmd.Process.Pid)-oursCPU)/n, (cpuTime(cp.ControllerManagerPID())-kcmCPU)/n
		ours, kcm := reportFlips(b, "flip-", lat)
		say("%d flips over %d Services: ours p50 %v p99 %v, kube-controller-manager p50 %v p99 %v (p99 %.2fx); CPU per flip ours %v, kube-controller-manager %v",
			n, len(targets), ours[0].Round(time.Millisecond), ours[1].Round(time.Millisecond), kcm[0].Round(time.Millisecond), kcm[1].Round(time.Millisecond),
			ours[1].Seconds()/kcm[1].Seconds(), oursCPU.Round(time.Millisecond), kcmCPU.Round(time.Millisecond))
		b.ReportMetric(ms(oursCPU), "ours-cpu-ms/flip")
		b.ReportMetric(ms(kcmCPU), "kcm-cpu-ms/flip")
		// Again once both have run the same flips: the first figure is
		// ours as its first pass ends, the controller's minutes after
		// it converged.
		oursRSS, kcmRSS = rssKiB(w.cmd.Process.Pid), rssKiB(cp.ControllerManagerPID())
		say("resident memory after the flips: ours %d MiB, kube-controller-manager %d MiB (%.2fx)", oursRSS/1024, kcmRSS/1024, float64(oursRSS)/float64(kcmRSS))
		b.ReportMetric(float64(oursRSS)/1024, "ours-rss-after-MiB")
		b.ReportMetric(float64(kcmRSS)/1024, "kcm-rss-after-MiB")
		w.stop(b, 15)

		// 6: the webhook, caching the whole cluster.
		webhookCachingTheCluster(b, cp, e, say)
		say("machine at the end: %s", machineState(cp))
		fmt.Fprintf(os.Stderr, "\n--- envelope summary ---\n%s\n\n", strings.Join(summary, "\n"))
	}
}

// controllerConvergesCold deletes our slices and starts kube-controller-manager
// on the same state; it returns how long the controller took to publish every
// Pod ready.
func controllerConvergesCold(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape, view *readyView) time.Duration {
	for n := range e.namespaces {
		err := cp.Admin.DiscoveryV1().EndpointSlices(e.ns(n)).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: discovery.LabelManagedBy + "=" + oursLabel})
		if err != nil {
			b.Fatalf("deleting our slices in %s: %v", e.ns(n), err)
		}
	}
	waitReadyCount(b, view, oursLabel, 0, time.Minute)
	kcmStart := time.Now()
	if err := cp.StartControllerManager(context.Background()); err != nil {
		b.Fatal(err)
	}
	return waitReadyCount(b, view, controllerLabel, e.pods, 2*time.Minute+time.Duration(e.services)*150*time.Millisecond).Sub(kcmStart)
}

// webhookCachingTheCluster times Service admissions by the webhook while it
// caches the whole cluster, and says the figures with say.
func webhookCachingTheCluster(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape, say func(format string, args ...any)) {
	ns := e.ns(0)
	shapes := []serviceShape{
		{map[string]string{"app": e.name(0)}, intstr.FromString("http")},
		{map[string]string{"app": e.name(0)}, intstr.FromString("metrics")},
		{map[string]string{"app": "Svc-0000"}, intstr.FromString("http")},
		{map[string]string{"env": "envelope"}, intstr.FromString("http")},
	}
	const admissions = 200
	wr := admitServices(b, cp, ns, admissions, shapes)
	wr.check(b, admissions)
	say("webhook caching the cluster: %d Service admissions, handling p50 %v p99 %v; API server round trip p99 %v",
		wr.admitted, wr.p50, wr.p99, percentile(wr.rtt, 0.99).Round(time.Millisecond))
	b.ReportMetric(ms(wr.p50), "webhook-p50-ms")
	b.ReportMetric(ms(wr.p99), "webhook-p99-ms")
}
