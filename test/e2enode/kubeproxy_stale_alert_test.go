package e2enode

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-slices/kubectl-slices/test/promrecord"
)

// holdChain is a chain of the nat table that is not kube-proxy's (no
// KUBE-SVC-, KUBE-SEP-… prefix, so kube-proxy leaves it alone).
const holdChain = "SLICES-E2E-HOLD"

// TestKubeProxyStaleAlert: the kube-proxy alerts fire on the samples of
// real kube-proxies that have stopped applying, each for its own node
// only, recorded side by side. On the second node (iptables mode) a rule of
// another tool jumps to a backend's endpoint chain; the backend turns not
// ready, so each sync of kube-proxy deletes that chain, which the kernel
// refuses while it is referenced (CHAIN_DEL: Device or resource busy), and
// the whole restore fails, again on every retry: kube-proxy lives and
// serves its metrics, its rules stay stale (KubeProxyApplyStale). The
// first node's kube-proxy, healthy until then (the silent case of that
// alert), is frozen (SIGSTOP) at +155 s: it answers no scrape, its series
// go stale (KubeProxyUnresponsive). Both nodes' /metrics are scraped every
// 15 s through kubectl port-forward for 240 s, and promtool evaluates the
// rules on those samples with its clock at the scrapes' real time.
// Continued, and with the other tool's rule removed, both apply again.
func TestKubeProxyStaleAlert(t *testing.T) {
	requireNode(t)
	dir := os.Getenv("KUBECTL_SLICES_PROMTOOL")
	if dir == "" {
		t.Skip("KUBECTL_SLICES_PROMTOOL is not set: make e2e-node builds promtool (hack/build-promtool.sh)")
	}
	proxies := kubeProxyPods(t)
	proxyA, proxyB := proxies[node.Name()], proxies[nodeB.Name()]
	ns := newNamespace(t, nil)
	manifests := []string{webService, workloadPodIn("web-b1", map[string]string{"app": "web"}, zoneB),
		workloadPodIn("web-b2", map[string]string{"app": "web"}, zoneB)}
	kubectl(t, strings.Join(manifests, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
	backends := runningPods(t, ns, "app=web", 2, true)
	syncSlices(t, ns, backends)
	held := backendNamed(t, backends, "web-b2")
	var sep string
	eventually(t, 60*time.Second, "node B's endpoint chain of web-b2", func() (err error) {
		sep, err = endpointChain(t, proxyB, held.Status.PodIP)
		return err
	})
	hold(t, proxyB, sep)

	// Timeline (s): the change at +1, node B stale from at most +65 and
	// firing by +150 (for 1m, evaluations every 15 s); node A frozen at
	// +155, its first failed scrape at +165, pending at +210, firing at
	// +225.
	const interval, scrapes = 15 * time.Second, 17
	rec := recordProxies(t, []corev1.Pod{proxyA, proxyB}, interval, scrapes)
	time.Sleep(time.Until(rec.start.Add(time.Second)))
	makeNotReady(t, held)
	syncSlices(t, ns, backends, held.Name)
	flipped := time.Since(rec.start).Round(time.Second)
	time.Sleep(time.Until(rec.start.Add(155 * time.Second)))
	cont := stopProcess(t, processOf(t, "kube-proxy", "--hostname-override="+node.Name()))
	frozen := time.Since(rec.start).Round(time.Second)
	targets := rec.wait()
	cont()
	logProxySamples(t, "node A", targets[0])
	logProxySamples(t, "node B", targets[1])

	instanceA, instanceB := targets[0].Labels["instance"], targets[1].Labels["instance"]
	stale := proxyAlert("KubeProxyApplyStale", instanceB, "IPv4", "A node's kube-proxy has stopped applying Service changes.",
		"has a change queued and has applied none for more than 60s (its health timeout): Services on that node route by stale rules.")
	unresponsive := proxyAlert("KubeProxyUnresponsive", instanceA, "", "A node's kube-proxy does not answer its scrapes.",
		"has answered no scrape for a minute: whether it still applies Service changes on that node is unknown.")
	end := (scrapes - 1) * interval
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := promrecord.Test{Promtool: dir, Rules: "../../monitoring/kubectl-slices.rules.yaml", Start: rec.start, Interval: interval,
		Series: promrecord.Series(targets, "kubeproxy_sync_proxy_rules_", "process_start_time_seconds"),
		Alerts: []promrecord.Alert{
			// Node B's, not node A's, healthy then.
			{Name: "KubeProxyApplyStale", EvalTime: 150 * time.Second, Firing: stale},
			{Name: "KubeProxyUnresponsive", EvalTime: 210 * time.Second},
			{Name: "KubeProxyUnresponsive", EvalTime: end, Firing: unresponsive},
			{Name: "KubeProxyApplyStale", EvalTime: end, Firing: stale},
		}}.Run(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("the kube-proxy alerts on the recorded samples (change at +%s, node A frozen at +%s): %v\n%s", flipped, frozen, err, out)
	}
	t.Logf("on the recorded samples: KubeProxyApplyStale fires for node B only at +150s and +%s (change at +%s); KubeProxyUnresponsive pending at +210s and firing for node A only at +%s (frozen at +%s)",
		end, flipped, end, frozen)

	// Continued, node A's answers again; the other tool's rule gone, node
	// B applies the change.
	addrA := portForward(t, proxyA, 10249)
	eventually(t, 30*time.Second, "node A's kube-proxy answering", func() error {
		if scrapeProxy(addrA) == nil {
			return fmt.Errorf("no answer")
		}
		return nil
	})
	unhold(t, proxyB)
	eventually(t, 90*time.Second, "node B's rules without web-b2", func() error {
		if _, err := endpointChain(t, proxyB, held.Status.PodIP); err == nil {
			return fmt.Errorf("%s still has an endpoint chain", held.Name)
		}
		return nil
	})
}

// recording scrapes kube-proxies' /metrics, each through a kubectl
// port-forward, every interval from start.
type recording struct {
	start   time.Time
	targets []promrecord.Target
	done    chan struct{}
}

// recordProxies starts recording the Pods' kube-proxy metrics: n scrapes,
// the first at start (the next whole second after the port-forwards are
// up, so that each scrape is where promtool places its sample). The test
// waits for the scrapes to end, even when it fails first.
func recordProxies(t *testing.T, pods []corev1.Pod, interval time.Duration, n int) *recording {
	addrs := make([]string, len(pods))
	for i, p := range pods {
		addrs[i] = portForward(t, p, 10249)
	}
	r := &recording{start: time.Now().Truncate(time.Second).Add(time.Second), targets: make([]promrecord.Target, len(pods)), done: make(chan struct{})}
	var wg sync.WaitGroup
	for i, p := range pods {
		r.targets[i].Labels = map[string]string{"job": "kube-proxy", "instance": p.Status.PodIP + ":10249"}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < n; k++ {
				time.Sleep(time.Until(r.start.Add(time.Duration(k) * interval)))
				r.targets[i].Scrapes = append(r.targets[i].Scrapes, scrapeProxy(addrs[i]))
			}
		}()
	}
	go func() { wg.Wait(); close(r.done) }()
	t.Cleanup(func() { <-r.done })
	return r
}

// wait returns the targets once every scrape is done.
func (r *recording) wait() []promrecord.Target {
	<-r.done
	return r.targets
}

// proxyAlert is the alert expected to fire for the kube-proxy at instance
// (and ipFamily, when the rule keeps kube-proxy's own label).
func proxyAlert(name, instance, ipFamily, summary, description string) []promrecord.Firing {
	labels := map[string]string{"severity": "warning", "job": "kube-proxy", "instance": instance}
	if ipFamily != "" {
		labels["ip_family"] = ipFamily
	}
	return []promrecord.Firing{{Labels: labels, Annotations: map[string]string{
		"summary":     summary,
		"description": "kube-proxy at " + instance + " " + description,
		"runbook_url": "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md#" + strings.ToLower(name),
	}}}
}

// endpointChain is the KUBE-SEP chain of the node's nat table that DNATs
// to ip (iptables mode).
func endpointChain(t *testing.T, proxy corev1.Pod, ip string) (string, error) {
	r, err := endpointDNAT(t, proxy, ip, func(to string) bool { return strings.HasPrefix(to, ip+":") })
	return r.chain, err
}

// hold adds holdChain, jumping to chain, to the node's nat table; removed
// when the test ends if unhold has not.
func hold(t *testing.T, proxy corev1.Pod, chain string) {
	t.Helper()
	kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "sh", "-c",
		fmt.Sprintf("iptables -t nat -N %[1]s && iptables -t nat -A %[1]s -j %[2]s", holdChain, chain)).ok(t)
	t.Cleanup(func() { unhold(t, proxy) })
}

func unhold(t *testing.T, proxy corev1.Pod) {
	t.Helper()
	kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "sh", "-c",
		fmt.Sprintf("! iptables -t nat -S %[1]s >/dev/null 2>&1 || { iptables -t nat -F %[1]s && iptables -t nat -X %[1]s; }", holdChain)).ok(t)
}

// scrapeProxy reads kube-proxy's /metrics at addr; nil when it did not
// answer within 5 s, as a scrape that failed.
func scrapeProxy(addr string) promrecord.Scrape {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil
	}
	return mf
}

// logProxySamples logs, per scrape, the last sync, the last queued change
// and the restore failures: what the alert judged, for a failure's reader.
func logProxySamples(t *testing.T, name string, tg promrecord.Target) {
	t.Helper()
	var b strings.Builder
	for i, sc := range tg.Scrapes {
		if sc == nil {
			fmt.Fprintf(&b, " [%d] no answer;", i)
			continue
		}
		v := func(family string) string {
			if mf := sc[family]; mf != nil && len(mf.Metric) > 0 {
				m := mf.Metric[0]
				if m.Gauge != nil {
					return fmt.Sprintf("%.0f", m.Gauge.GetValue())
				}
				if m.Counter != nil {
					return fmt.Sprintf("%.0f", m.Counter.GetValue())
				}
			}
			return "-"
		}
		fmt.Fprintf(&b, " [%d] last %s queued %s restore failures %s;", i, v("kubeproxy_sync_proxy_rules_last_timestamp_seconds"),
			v("kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds"), v("kubeproxy_sync_proxy_rules_iptables_restore_failures_total"))
	}
	t.Logf("%s's kube-proxy:%s", name, b.String())
}
