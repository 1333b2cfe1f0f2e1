package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/pager"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// BenchmarkEnvelope: the envelope's ladder (10,000, 50,000, 100,000 and
// 150,000 Pods by default; ENVELOPE_LADDER or ENVELOPE_PODS choose), each
// size on a control plane of its own, one step after the other:
//
//  1. cold `sync --all -A` (no slice exists): wall time, API requests,
//     peak RSS; a no-op `sync --all -A` again; `check -A` (no finding
//     allowed); `explain pod/…` and `explain --ip … -A` for an address a
//     Pod holds and one nobody holds;
//  2. our slices deleted (DeleteCollection per namespace, waited out
//     through the watch), so the cluster is as before step 1; then
//     kube-controller-manager (its EndpointSlice controller only) started
//     cold: time until its slices publish every ready Pod, and its RSS;
//  3. `sync --watch --all -A` started cold beside it: time to its caches
//     filled and to all our slices written, RSS of both; ENVELOPE_FLIPS
//     readiness flips (100), one at a time over Services spread evenly,
//     each timed from its status write to each manager's slice update seen
//     through a watch, the status write alone timed as the floor; CPU per
//     flip and RSS of both after them;
//  4. `kubectl slices webhook` caching the cluster: 200 Service
//     admissions once its CPU is quiet after the fill, its handling
//     p50/p99 and CPU per admission;
//  5. the peak RSS of kube-apiserver and etcd over the step, and the
//     machine's memory left.
//
// ENVELOPE_PROFILE=1 adds CPU profiles (profileRuns, the watch's and the
// webhook's); ENVELOPE_PROFILE=heap takes the watch's heap instead of its
// CPU.
// Each step's row goes to ENVELOPE_OUT/envelope.csv (rewritten after every
// step; the table is printed after each) for test/cmd/envelopeplot. What
// gives out fails the benchmark with the control plane's processes and the
// memory left. Run with -benchtime 1x (make bench-envelope).
func BenchmarkEnvelope(b *testing.B) {
	ladder := envelopeLadder(b)
	out := os.Getenv("ENVELOPE_OUT")
	if out == "" {
		out = b.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		b.Fatal(err)
	}
	csvPath := filepath.Join(out, "envelope.csv")
	var rows []envelopeRow
	for _, e := range ladder {
		ok := b.Run(fmt.Sprintf("pods=%d", e.pods), func(b *testing.B) {
			for b.Loop() {
				rows = append(rows, envelopeStep(b, e, out))
			}
		})
		if err := saveEnvelopeCSV(csvPath, rows); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "\n--- envelope, %d of %d steps (%s) ---\n%s\n", len(rows), len(ladder), csvPath, envelopeTable(rows))
		if !ok {
			// A larger step would give out the same way, hours later.
			b.Fatalf("the ladder stops at %s", e)
		}
	}
}

// envelopeStep seeds e on a control plane of its own and measures it;
// with ENVELOPE_PROFILE set, CPU profiles of the one-shot commands and of
// the watch loop go to out.
func envelopeStep(b *testing.B, e envelopeShape, out string) envelopeRow {
	flips := 100
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
	row := envelopeRow{Pods: e.pods, Services: e.services, Namespaces: e.namespaces, Nodes: e.nodes}
	seeded := time.Now()
	seedEnvelope(b, cp, e)
	row.Seed = time.Since(seeded)
	view := followSlices(b, cp, metav1.NamespaceAll)
	ready := e.readyEndpoints()
	b.Logf("after seeding %s (%d ready endpoints a manager publishes): %s", e, ready, machineState(cp))

	// 1: one-shot commands.
	cold := runPluginMeasured(b, cp, "sync", "--all", "-A")
	waitReadyCount(b, view, oursLabel, ready, time.Minute)
	row.ColdSync, row.ColdSyncRequests, row.ColdSyncMaxRSS = cold.took, cold.requests, cold.peakKiB
	resync := runPluginMeasured(b, cp, "sync", "--all", "-A")
	if strings.Contains(resync.verbs, ",") || !strings.HasPrefix(resync.verbs, "GET ") {
		b.Errorf("the no-op resync made requests other than lists: %s", resync.verbs)
	}
	row.Resync, row.ResyncRequests = resync.took, resync.requests
	row.Check = timedCheck(b, cp, e.services)
	mid := e.services / 2
	held := e.pod(mid, 4)
	row.ExplainPod, _ = explainRun(b, cp, "explain", "pod/"+held.Name, "-n", e.ns(mid), "-o", "json")
	row.ExplainIP, _ = explainRun(b, cp, "explain", "--ip", held.IPs[0], "-A", "-o", "json")
	row.ExplainNoIP, _ = explainRun(b, cp, "explain", "--ip", "10.250.0.1", "-A", "-o", "json")
	row.PodList = timedPodList(b, cp)
	profiles := os.Getenv("ENVELOPE_PROFILE") != ""
	if profiles {
		profileRuns(b, cp, e, out)
	}
	b.Logf("cold sync %v (%d requests, peak %d MiB), resync %v, check %v, explain pod %v, --ip held %v, unheld %v",
		row.ColdSync.Round(time.Millisecond), row.ColdSyncRequests, row.ColdSyncMaxRSS/1024, row.Resync.Round(time.Millisecond),
		row.Check.Round(time.Millisecond), row.ExplainPod.Round(time.Millisecond), row.ExplainIP.Round(time.Millisecond), row.ExplainNoIP.Round(time.Millisecond))

	// 2: the controller, cold on the same state.
	row.KCMCold = controllerConvergesCold(b, cp, e, view, ready)
	row.KCMColdRSS = rssKiB(cp.ControllerManagerPID())
	b.Logf("kube-controller-manager's cold convergence %v, RSS %d MiB", row.KCMCold.Round(time.Millisecond), row.KCMColdRSS/1024)

	// 3: the watch loop from cold, beside the converged controller.
	watchStart := time.Now()
	watchArgs := []string{"sync", "--watch", "--all", "-A", "--summary-interval=0"}
	if profiles {
		// Written when the loop stops, after the flips: its first pass
		// and the flips in one CPU profile; with ENVELOPE_PROFILE=heap,
		// the heap it holds then instead (what its RSS is made of).
		kind := "cpu"
		if os.Getenv("ENVELOPE_PROFILE") == "heap" {
			kind = "heap"
		}
		watchArgs = append(watchArgs, "--profile="+kind, "--profile-output="+filepath.Join(out, fmt.Sprintf("watch-%s-%d.pprof", kind, e.pods)))
	}
	w := startWatch(b, cp, cp.Kubeconfig, watchArgs...)
	w.waitLine(b, "caches filled", 10*time.Minute)
	row.WatchFilled = time.Since(watchStart)
	row.WatchWritten = waitReadyCount(b, view, oursLabel, ready, 2*time.Minute+time.Duration(e.services)*50*time.Millisecond).Sub(watchStart)
	row.OursRSS = rssKiB(w.cmd.Process.Pid)
	// The controller has run for minutes; ours has just ended its first
	// pass and returns its garbage to the OS: flip once that is done, so
	// both are timed in their steady state.
	row.WatchSettled = settled(b, w.cmd.Process.Pid, time.Minute).Sub(watchStart)
	flipEnvelope(b, cp, e, view, w, flips, &row)
	w.stop(b, 15)

	// 4: the webhook, caching the whole cluster.
	var hookArgs []string
	if profiles {
		// Its fill and the admissions; `-focus` on the handler parts them.
		hookArgs = []string{"--profile=cpu", "--profile-output=" + filepath.Join(out, fmt.Sprintf("webhook-cpu-%d.pprof", e.pods))}
	}
	row.WebhookP50, row.WebhookP99 = webhookCachingTheCluster(b, cp, e, hookArgs...)

	// 5: what the control plane used.
	procs := controlPlaneProcesses(cp)
	row.APIServerPeak, row.EtcdPeak = peakRSSKiB(procs["kube-apiserver"]), peakRSSKiB(procs["etcd"])
	row.MemAvailable = memAvailableKiB()
	b.Logf("machine at the end: %s", machineState(cp))
	return row
}

// flipEnvelope flips the readiness of ready Pods of Services spread evenly
// (two flips a Pod: not ready, then ready again) and records in row the
// flips' latencies, the floor, CPU per flip and RSS after them.
func flipEnvelope(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape, view *readyView, w *watcher, flips int, row *envelopeRow) {
	rng := rand.New(rand.NewPCG(3, 4))
	var targets []flipTarget
	for k := range flips / 2 {
		s := k * e.services / (flips / 2)
		i := rng.IntN(envelopePerService)
		if !e.ready(s, i) {
			i = (i + 1) % envelopePerService
		}
		targets = append(targets, flipTarget{e.ns(s), e.pod(s, i)})
	}
	oursPID, kcmPID := w.cmd.Process.Pid, cp.ControllerManagerPID()
	oursCPU, kcmCPU := cpuTime(oursPID), cpuTime(kcmPID)
	lat := flipTimed(b, cp, view, targets)
	n := time.Duration(2 * len(targets))
	row.Flips = int(n)
	row.OursCPU, row.KCMCPU = (cpuTime(oursPID)-oursCPU)/n, (cpuTime(kcmPID)-kcmCPU)/n
	row.Floor = [2]time.Duration{percentile(lat[statusWrite], 0.5), percentile(lat[statusWrite], 0.99)}
	row.Ours, row.KCM = reportFlips(b, "flip-", lat)
	row.OursOver, row.KCMOver = percentile(aboveWrite(lat[oursLabel], lat[statusWrite]), 0.99), percentile(aboveWrite(lat[controllerLabel], lat[statusWrite]), 0.99)
	row.OursRSSAfter, row.KCMRSSAfter = rssKiB(oursPID), rssKiB(kcmPID)
}

// profileRuns runs the one-shot commands again (after the timed runs,
// which they do not disturb) with a CPU profile each, into dir as
// NAME-PODS.pprof: where a target is missed, the profile says why.
func profileRuns(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape, dir string) {
	for _, r := range []struct {
		name string
		args []string
	}{
		{"resync", []string{"sync", "--all", "-A"}},
		{"check", []string{"check", "-A", "-o", "json"}},
		{"ip-unheld", []string{"explain", "--ip", "10.250.0.1", "-A", "-o", "json"}},
	} {
		out := filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", r.name, e.pods))
		cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), append([]string{"--kubeconfig", cp.Kubeconfig, "--profile=cpu", "--profile-output=" + out}, r.args...)...)
		if msg, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 3 { // 3: the address is unheld
			b.Fatalf("%v with a profile: %v\n%.2000s", r.args, err, msg)
		}
	}
}

// timedPodList is the floor of any read of every Pod: one list of them
// in every namespace as the plugin reads them (protobuf, pages of 2,000:
// its cluster.NewClient and cluster.PageSize, which the test module does
// not import), decoded and dropped, timed alone.
func timedPodList(b *testing.B, cp *controlplane.ControlPlane) time.Duration {
	cfg := rest.CopyConfig(cp.AdminConfig)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = -1, 0
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	p := pager.New(func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods("").List(ctx, o)
	})
	p.PageSize = 2000
	if err := p.EachListItem(context.Background(), metav1.ListOptions{}, func(runtime.Object) error { return nil }); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// aboveWrite is each flip's time past its own status write: flipTimed
// records one of each per flip, in flip order.
func aboveWrite(flips, writes []time.Duration) []time.Duration {
	out := make([]time.Duration, len(flips))
	for i := range flips {
		out[i] = flips[i] - writes[i]
	}
	return out
}

// settled waits until pid uses under 2% of a core over a second (at most
// limit) and returns when.
func settled(b *testing.B, pid int, limit time.Duration) time.Time {
	deadline := time.Now().Add(limit)
	for {
		before := cpuTime(pid)
		time.Sleep(time.Second)
		if cpuTime(pid)-before < 20*time.Millisecond {
			return time.Now()
		}
		if time.Now().After(deadline) {
			b.Logf("process %d still busy %v after its first pass or fill; measuring anyway", pid, limit)
			return time.Now()
		}
	}
}

// controllerConvergesCold deletes our slices and starts kube-controller-manager
// on the same state; it returns how long the controller took to publish every
// ready Pod.
func controllerConvergesCold(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape, view *readyView, ready int) time.Duration {
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
	return waitReadyCount(b, view, controllerLabel, ready, 2*time.Minute+time.Duration(e.services)*150*time.Millisecond).Sub(kcmStart)
}

// webhookCachingTheCluster times Service admissions by the webhook while it
// caches the whole cluster and returns the handling p50 and p99.
func webhookCachingTheCluster(b *testing.B, cp *controlplane.ControlPlane, e envelopeShape, args ...string) (p50, p99 time.Duration) {
	ns := e.ns(0)
	shapes := []serviceShape{
		{map[string]string{"app": e.name(0)}, intstr.FromString("http")},
		{map[string]string{"app": e.name(0)}, intstr.FromString("metrics")},
		{map[string]string{"app": "Svc-00000"}, intstr.FromString("http")},
		{map[string]string{"env": "envelope"}, intstr.FromString("http")},
	}
	const admissions = 200
	wr := admitServices(b, cp, ns, admissions, shapes, args...)
	wr.check(b, admissions)
	b.Logf("webhook caching the cluster: %d Service admissions, handling p50 %v p99 %v, CPU %v an admission; API server round trip p99 %v",
		wr.admitted, wr.p50, wr.p99, (wr.cpu / admissions).Round(time.Microsecond), percentile(wr.rtt, 0.99).Round(time.Millisecond))
	return wr.p50, wr.p99
}

// memAvailableKiB is the machine's MemAvailable.
func memAvailableKiB() int {
	raw, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "MemAvailable:") {
			kib, _ := strconv.Atoi(strings.Fields(l)[1])
			return kib
		}
	}
	return -1
}
