package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// Benchmark shape of issue 9: 500 Services x 10 Pods in 20 namespaces.
const (
	manyNamespaces  = 20
	manyServices    = 25 // per namespace
	podsPerService  = 10
	manyServicesAll = manyNamespaces * manyServices
)

// startBenchCluster starts a control plane of the benchmark's own, so that
// -A sees only its objects and its controller manager starts cold.
func startBenchCluster(b *testing.B) *controlplane.ControlPlane {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return ownCluster(b, ctx)
}

// seedMany creates the 500 Services and 5,000 ready Pods.
func seedMany(b *testing.B, cp *controlplane.ControlPlane) {
	b.Helper()
	start := time.Now()
	for n := range manyNamespaces {
		ns := fmt.Sprintf("many-%02d", n)
		if err := cp.Namespace(context.Background(), ns); err != nil {
			b.Fatal(err)
		}
		var specs []controlplane.PodSpec
		for s := range manyServices {
			app := fmt.Sprintf("svc-%02d", s)
			mustService(b, cp, service(ns, app))
			for i := range podsPerService {
				p := podSpec(app, i, 60+n)
				p.IPs = []string{fmt.Sprintf("10.%d.%d.%d", 60+n, s, i+1)}
				specs = append(specs, p)
			}
		}
		mustPods(b, cp, ns, specs...)
	}
	b.Logf("seeded %d Services and %d Pods in %s", manyServicesAll, manyServicesAll*podsPerService, time.Since(start).Round(time.Millisecond))
}

var requestsLine = regexp.MustCompile(`api requests: (\d+) \(([^)]*)\)`)

// runPlugin runs the plugin binary directly and returns its wall time and
// the API requests it counted.
func runPlugin(b *testing.B, cp *controlplane.ControlPlane, args ...string) (time.Duration, int, string) {
	b.Helper()
	r := runPluginMeasured(b, cp, args...)
	return r.took, r.requests, r.verbs
}

// pluginRun is one run of the plugin binary: its wall time, the API
// requests it counted (and by verb), and its peak resident memory.
type pluginRun struct {
	took     time.Duration
	requests int
	verbs    string
	peakKiB  int
}

func runPluginMeasured(b *testing.B, cp *controlplane.ControlPlane, args ...string) pluginRun {
	b.Helper()
	cmd := exec.Command(filepath.Join(pluginDir, "kubectl-slices"), append([]string{"--kubeconfig", cp.Kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECTL_SLICES_COUNT_REQUESTS=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%v: %v\n%s", args, err, errOut.String())
	}
	r := pluginRun{took: time.Since(start)}
	m := requestsLine.FindStringSubmatch(errOut.String())
	if m == nil {
		b.Fatalf("no request count in stderr:\n%s", errOut.String())
	}
	r.requests, _ = strconv.Atoi(m[1])
	r.verbs = m[2]
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.peakKiB = int(ru.Maxrss) // KiB on Linux
	}
	return r
}

// convergedServices counts Services whose slices by managedBy carry all
// their perService Pods as ready endpoints.
func convergedServices(b *testing.B, cp *controlplane.ControlPlane, managedBy string, perService int) int {
	list, err := cp.Admin.DiscoveryV1().EndpointSlices("").List(context.Background(),
		metav1.ListOptions{LabelSelector: discovery.LabelManagedBy + "=" + managedBy})
	if err != nil {
		b.Fatal(err)
	}
	ready := map[string]int{}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready[s.Namespace+"/"+s.Labels[discovery.LabelServiceName]]++
			}
		}
	}
	n := 0
	for _, c := range ready {
		if c == perService {
			n++
		}
	}
	return n
}

// BenchmarkSyncAllNamespaces: `sync --all -A` over 500 Services x 10 Pods in
// 20 namespaces, first sync and no-op resync (wall time and API requests),
// then kube-controller-manager (only its EndpointSlice controller) started
// cold on the same cluster, timed until its slices carry every Pod. Run with
// -benchtime 1x (make bench-cache).
func BenchmarkSyncAllNamespaces(b *testing.B) {
	cp := startBenchCluster(b)
	seedMany(b, cp)
	for b.Loop() {
		first, firstReq, firstVerbs := runPlugin(b, cp, "sync", "--all", "-A")
		if got := convergedServices(b, cp, oursLabel, podsPerService); got != manyServicesAll {
			b.Fatalf("after the first sync %d of %d Services converged", got, manyServicesAll)
		}
		resync, resyncReq, resyncVerbs := runPlugin(b, cp, "sync", "--all", "-A")
		b.Logf("ours: first sync %v (%d requests: %s); no-op resync %v (%d requests: %s)",
			first.Round(time.Millisecond), firstReq, firstVerbs, resync.Round(time.Millisecond), resyncReq, resyncVerbs)
		b.ReportMetric(float64(first.Milliseconds()), "first-ms")
		b.ReportMetric(float64(resync.Milliseconds()), "resync-ms")
		b.ReportMetric(float64(firstReq), "first-requests")
		b.ReportMetric(float64(resyncReq), "resync-requests")

		start := time.Now()
		if err := cp.StartControllerManager(context.Background()); err != nil {
			b.Fatal(err)
		}
		for convergedServices(b, cp, controllerLabel, podsPerService) < manyServicesAll {
			if time.Since(start) > 5*time.Minute {
				b.Fatal("kube-controller-manager did not converge within 5 minutes")
			}
			time.Sleep(100 * time.Millisecond)
		}
		kcm := time.Since(start)
		b.Logf("kube-controller-manager: cold convergence %v", kcm.Round(time.Millisecond))
		b.ReportMetric(float64(kcm.Milliseconds()), "kcm-cold-ms")
	}
}
