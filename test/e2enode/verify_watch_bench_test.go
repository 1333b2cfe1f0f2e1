package e2enode

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/promrecord"
)

// BenchmarkVerifyWatch: `kubectl slices verify --watch --all` over the
// same VERIFY_SERVICES Services (1,000 by default) on the two real nodes,
// rounds every 30 s (the shortest --interval, kube-proxy's sync period),
// its waits grown with the Services as BenchmarkVerifyAll's. It reports
// the steady state per round over three rounds (its duration, the
// verifier's CPU, each node's execs and bytes read and the CPU of its
// kube-proxy container, the execs' included), then the time from a DNAT
// rule deleted by hand on the second node to its DRIFT gauge.
// make bench-verify.
func BenchmarkVerifyWatch(b *testing.B) {
	ns, services := benchServices(b)
	w := startVerifyWatch(b, "--all", "-n", ns, "--interval", "30s", "--sync-period", "30s",
		"--node-timeout", fmt.Sprintf("%.0fs", scaled(time.Minute, services).Seconds()))
	a, nb := node.Name(), nodeB.Name()
	w.waitStatus(b, scaled(3*time.Minute, services), map[string]string{a: "OK", nb: "OK"})
	proxies := kubeProxyPods(b)
	cgroups := map[string]string{}
	for _, n := range []string{a, nb} {
		cgroups[n] = cgroupOf(b, processOf(b, "kube-proxy", "--hostname-override="+n))
	}
	type sample struct {
		rounds, roundSeconds, cpu float64
		execs, bytes, proxyCPU    map[string]float64
	}
	read := func() sample {
		mf, err := w.scrape()
		if err != nil {
			b.Fatal(err)
		}
		s := sample{rounds: gauge(mf, "kubectl_slices_dataplane_rounds_total", nil), cpu: gauge(mf, "process_cpu_seconds_total", nil),
			execs: map[string]float64{}, bytes: map[string]float64{}, proxyCPU: map[string]float64{}}
		if h := mf["kubectl_slices_dataplane_round_duration_seconds"]; h != nil && len(h.Metric) > 0 {
			s.roundSeconds = h.Metric[0].GetHistogram().GetSampleSum()
		}
		for _, n := range []string{a, nb} {
			s.execs[n] = gauge(mf, "kubectl_slices_dataplane_execs_total", map[string]string{"target": n})
			s.bytes[n] = gauge(mf, "kubectl_slices_dataplane_read_bytes_total", map[string]string{"target": n})
			s.proxyCPU[n] = cgroupCPU(b, cgroups[n])
		}
		return s
	}
	waitRounds := func(after float64) sample {
		var s sample
		eventually(b, scaled(2*time.Minute, services), fmt.Sprintf("round %v", after+1), func() error {
			if s = read(); s.rounds <= after {
				return fmt.Errorf("%v rounds", s.rounds)
			}
			return nil
		})
		return s
	}
	b.ResetTimer()
	first := waitRounds(read().rounds)
	const rounds = 3
	last := first
	for range rounds {
		last = waitRounds(last.rounds)
	}
	b.StopTimer()
	n := last.rounds - first.rounds
	b.ReportMetric((last.roundSeconds-first.roundSeconds)/n, "s/round")
	b.ReportMetric((last.cpu-first.cpu)/n, "verifier-cpu-s/round")
	for i, nd := range []string{a, nb} {
		b.ReportMetric((last.execs[nd]-first.execs[nd])/n, fmt.Sprintf("execs/round/node%d", i))
		b.ReportMetric((last.bytes[nd]-first.bytes[nd])/n, fmt.Sprintf("bytes/round/node%d", i))
		b.ReportMetric((last.proxyCPU[nd]-first.proxyCPU[nd])/n, fmt.Sprintf("kube-proxy-cpu-s/round/node%d", i))
	}
	b.Logf("%v rounds over %s", n, "≈30 s each")

	// A rule deleted by hand: the time to the DRIFT gauge (bounded by the
	// interval and a round), polled every 200 ms.
	backend := ""
	for _, p := range runningPods(b, ns, "app=web", 2, true) {
		if p.Spec.NodeName == nb {
			backend = p.Status.PodIP + ":8000"
		}
	}
	dnat := dnatRule(b, proxies[nb], backend) // one Service's of them all
	kubectl(b, "", "exec", "-n", "kube-system", proxies[nb].Name, "--", "sh", "-c", `eval "iptables -w 5 -t nat -D ${1#-A }"`, "sh", dnat).ok(b)
	deleted := time.Now()
	defer restartKubeProxies(b, proxies[nb])
	var took time.Duration
	eventually(b, scaled(2*time.Minute, services), "node B DRIFT", func() error {
		st, err := w.statuses()
		if err != nil || st[nb] != "DRIFT" {
			return fmt.Errorf("%v %v", st, err)
		}
		took = time.Since(deleted)
		return nil
	})
	b.ReportMetric(took.Seconds(), "s-rule-deleted-to-drift")
	b.Logf("a DNAT rule to %s deleted on node B: DRIFT gauge after %s", backend, took.Round(100*time.Millisecond))
}

// gauge sums the samples of a family (counter or gauge) whose labels
// include want; 0 when none.
func gauge(mf promrecord.Scrape, name string, want map[string]string) float64 {
	sum := 0.0
	for _, m := range mf[name].GetMetric() {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.GetLabel() {
				found = found || (l.GetName() == k && l.GetValue() == v)
			}
			ok = ok && found
		}
		if ok {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// cgroupOf is the file holding a process's cgroup CPU time: cgroup v2's
// cpu.stat, or v1's cpuacct.usage (this machine's hierarchy may be either).
func cgroupOf(b testing.TB, pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var candidates []string
		switch {
		case f[0] == "0" && f[1] == "":
			candidates = []string{filepath.Join("/sys/fs/cgroup", f[2], "cpu.stat")}
		case strings.Contains(f[1], "cpuacct"):
			for _, dir := range []string{f[1], "cpuacct", "cpu,cpuacct"} {
				candidates = append(candidates, filepath.Join("/sys/fs/cgroup", dir, f[2], "cpuacct.usage"))
			}
		}
		for _, c := range candidates {
			if _, err := os.Stat(c); err == nil {
				return c
			}
		}
	}
	b.Fatalf("process %d: no cgroup CPU accounting found from %q", pid, raw)
	return ""
}

// cgroupCPU is a cgroup's CPU time so far, in seconds: every process of
// the container, the execs' included.
func cgroupCPU(b testing.TB, file string) float64 {
	raw, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	if strings.HasSuffix(file, "cpuacct.usage") {
		ns, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if err != nil {
			b.Fatal(err)
		}
		return ns / 1e9
	}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "usage_usec "); ok {
			us, _ := strconv.ParseFloat(v, 64)
			return us / 1e6
		}
	}
	b.Fatalf("%s has no usage_usec", file)
	return 0
}
