package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

const (
	epBenchServices = 200
	epBenchPerSvc   = 100 // 20,000 Pods, every one listed in an Endpoints object
)

// BenchmarkWatchEndpointsMemory: what caching every Endpoints object costs
// `sync --watch -A` (it caches them to mirror selector-less Services). On
// 200 Services of 100 ready Pods (20,000 Pods, so no Endpoints object is
// truncated and every Pod is listed once), the resident memory of a fresh
// watch once it is idle is measured before any Endpoints object exists,
// then after kube-controller-manager's Endpoints controller wrote the 200
// objects it writes for them: resident memory, and the live heap the
// runtime's periodic GC leaves once idle. Run with -benchtime 1x (make
// bench-watch). Measured (2 cores, shared): before the watch cache held
// controller-written Endpoints objects emptied, +19 MiB resident and +6 MB
// live heap with the 200 objects; since, +4 MiB and +0 MB.
func BenchmarkWatchEndpointsMemory(b *testing.B) {
	cp := startBenchCluster(b)
	ctx := context.Background()
	ns := "eps"
	if err := cp.Namespace(ctx, ns); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	var specs []controlplane.PodSpec
	for s := range epBenchServices {
		name := fmt.Sprintf("svc-%03d", s)
		mustService(b, cp, service(ns, name))
		for i := range epBenchPerSvc {
			spec := podSpec(name, i, 0)
			spec.IPs = []string{fmt.Sprintf("10.%d.%d.%d", 100+s/250, s%250, i+1)}
			specs = append(specs, spec)
		}
	}
	if err := cp.Pods(ctx, ns, specs, 16); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d Services, %d Pods in %v", epBenchServices, len(specs), time.Since(start).Round(time.Second))
	kubectl(b, cp, "slices", "sync", "--all", "-A").mustCode(b, 0)

	for b.Loop() {
		without, withoutHeap := idleWatchMemory(b, cp)
		if err := cp.StartControllers(ctx, "endpoints-controller"); err != nil {
			b.Fatal(err)
		}
		addrs, bytes := 0, 0
		deadline := time.Now().Add(5 * time.Minute)
		for addrs < len(specs) {
			if time.Now().After(deadline) {
				b.Fatalf("the Endpoints controller listed %d of %d addresses", addrs, len(specs))
			}
			time.Sleep(time.Second)
			list, err := cp.Admin.CoreV1().Endpoints(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				b.Fatal(err)
			}
			addrs, bytes = 0, 0
			for _, ep := range list.Items {
				for _, s := range ep.Subsets {
					addrs += len(s.Addresses)
				}
				raw, _ := json.Marshal(ep)
				bytes += len(raw)
			}
		}
		cp.StopControllerManager()
		b.Logf("the Endpoints controller wrote %d addresses, %d KiB as JSON", addrs, bytes/1024)
		with, withHeap := idleWatchMemory(b, cp)
		b.Logf("sync --watch -A once idle: resident %d MiB without Endpoints objects, %d MiB with them (%+d MiB); live heap after the last GC %d MB without, %d MB with (%+d MB)",
			without/1024, with/1024, (with-without)/1024, withoutHeap, withHeap, withHeap-withoutHeap)
		b.ReportMetric(float64(without)/1024, "rss-without-eps-MiB")
		b.ReportMetric(float64(with)/1024, "rss-with-eps-MiB")
		b.ReportMetric(float64(withoutHeap), "heap-without-eps-MB")
		b.ReportMetric(float64(withHeap), "heap-with-eps-MB")
	}
}

// idleWatchMemory starts `sync --watch -A` on a converged cluster with
// GODEBUG=gctrace=1, waits until its caches are filled and its resident
// memory has not moved by more than 1% for 10 s, then until the runtime's
// periodic GC (forced every 2 minutes) has run while idle, stops it and
// returns its resident memory in KiB and the live heap the last GC left,
// in MB.
func idleWatchMemory(b *testing.B, cp *controlplane.ControlPlane) (int, int) {
	b.Helper()
	old, had := os.LookupEnv("GODEBUG")
	os.Setenv("GODEBUG", "gctrace=1")
	w := startWatch(b, cp, cp.Kubeconfig, "sync", "--all", "-A", "--watch", "--summary-interval=0")
	if had {
		os.Setenv("GODEBUG", old)
	} else {
		os.Unsetenv("GODEBUG")
	}
	w.waitLine(b, "caches filled", 3*time.Minute)
	last, since := rssKiB(w.cmd.Process.Pid), time.Now()
	for deadline := time.Now().Add(3 * time.Minute); time.Since(since) < 10*time.Second; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			b.Fatal("the watch's memory did not settle")
		}
		if n := rssKiB(w.cmd.Process.Pid); n > last+last/100 || n < last-last/100 {
			last, since = n, time.Now()
		}
	}
	idle := len(strings.Split(w.output(), "\n"))
	within(b, "a forced GC while idle", 3*time.Minute, func() bool {
		lines := strings.Split(w.output(), "\n")[idle:]
		for i, l := range lines {
			// The periodic GC prints "GC forced", then its gc line.
			if l == "GC forced" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "gc ") {
				return true
			}
		}
		return false
	})
	rss := rssKiB(w.cmd.Process.Pid)
	heap := -1
	live := regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB`)
	for _, l := range strings.Split(w.output(), "\n") {
		if m := live.FindStringSubmatch(l); m != nil && strings.HasPrefix(l, "gc ") {
			heap, _ = strconv.Atoi(m[3])
		}
	}
	w.stop(b, 15)
	return rss, heap
}
