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
// first node's kube-proxy is frozen (SIGSTOP) 35 s in: it answers no
// scrape, its series go stale (KubeProxyUnresponsive). Both nodes' /metrics
// are scraped every 15 s through kubectl port-forward for 150 s, and
// promtool evaluates the rules on those samples with its clock at the
// scrapes' real time. Continued, and with the other tool's rule removed,
// both apply again.
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

	targets := []*promrecord.Target{{}, {}}
	for i, p := range []corev1.Pod{proxyA, proxyB} {
		targets[i].Labels = map[string]string{"job": "kube-proxy", "instance": p.Status.PodIP + ":10249"}
	}
	const interval, scrapes = 15 * time.Second, 11
	start := time.Now().Truncate(time.Second).Add(time.Second)
	var wg sync.WaitGroup
	for i, p := range []corev1.Pod{proxyA, proxyB} {
		addr := portForward(t, p, 10249)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < scrapes; n++ {
				time.Sleep(time.Until(start.Add(time.Duration(n) * interval)))
				targets[i].Scrapes = append(targets[i].Scrapes, scrapeProxy(addr))
			}
		}()
	}
	// The change kube-proxy on node B cannot apply.
	time.Sleep(time.Until(start.Add(time.Second)))
	makeNotReady(t, held)
	syncSlices(t, ns, backends, held.Name)
	flipped := time.Since(start).Round(time.Second)
	time.Sleep(time.Until(start.Add(35 * time.Second)))
	cont := stopProcess(t, processOf(t, "kube-proxy", "--hostname-override="+node.Name()))
	frozen := time.Since(start).Round(time.Second)
	wg.Wait()
	cont()
	logProxySamples(t, "node A", *targets[0])
	logProxySamples(t, "node B", *targets[1])

	instanceA, instanceB := targets[0].Labels["instance"], targets[1].Labels["instance"]
	// Before the health timeout after the change (at an evaluation):
	// silent on both.
	silentAt := (flipped + 45*time.Second + interval - 1) / interval * interval
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := promrecord.Test{Promtool: dir, Rules: "../../monitoring/kubectl-slices.rules.yaml", Start: start, Interval: interval,
		Series: promrecord.Series([]promrecord.Target{*targets[0], *targets[1]}, "kubeproxy_sync_proxy_rules_", "process_start_time_seconds"),
		Alerts: []promrecord.Alert{
			{Name: "KubeProxyApplyStale", EvalTime: silentAt},
			{Name: "KubeProxyUnresponsive", EvalTime: 30 * time.Second},
			// Node A's, not node B's.
			{Name: "KubeProxyUnresponsive", EvalTime: (scrapes - 1) * interval, Firing: []promrecord.Firing{{
				Labels: map[string]string{"severity": "warning", "job": "kube-proxy", "instance": instanceA},
				Annotations: map[string]string{
					"summary":     "A node's kube-proxy does not answer its scrapes.",
					"description": "kube-proxy at " + instanceA + " served its metrics within the last hour and has answered no scrape for a minute: whether it still applies Service changes on that node is unknown.",
					"runbook_url": "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md#kubeproxyunresponsive",
				},
			}}},
			// Node B's, not node A's.
			{Name: "KubeProxyApplyStale", EvalTime: (scrapes - 1) * interval, Firing: []promrecord.Firing{{
				Labels: map[string]string{"severity": "warning", "job": "kube-proxy", "instance": instanceB, "ip_family": "IPv4"},
				Annotations: map[string]string{
					"summary":     "A node's kube-proxy has stopped applying Service changes.",
					"description": "kube-proxy at " + instanceB + " has a change queued and has applied none for more than 60s (its health timeout): Services on that node route by stale rules.",
					"runbook_url": "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md#kubeproxyapplystale",
				},
			}}},
		}}.Run(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("the kube-proxy alerts on the recorded samples (change at +%s, node A frozen at +%s): %v\n%s", flipped, frozen, err, out)
	}
	t.Logf("on the recorded samples at +%s: KubeProxyApplyStale fires for node B only (change at +%s; silent at +%s), KubeProxyUnresponsive for node A only (frozen at +%s; silent at +30s)",
		(scrapes-1)*interval, flipped, silentAt, frozen)

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

// endpointChain is the KUBE-SEP chain of node's nat table that DNATs to
// ip, read through kubectl exec into its kube-proxy Pod (iptables mode).
func endpointChain(t *testing.T, proxy corev1.Pod, ip string) (string, error) {
	out := kubectl(t, "", "exec", "-n", "kube-system", proxy.Name, "--", "iptables-save", "-t", "nat").ok(t)
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "-A" && strings.HasPrefix(f[1], "KUBE-SEP-") && f[len(f)-2] == "--to-destination" && strings.HasPrefix(f[len(f)-1], ip+":") {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("no endpoint chain DNATs to %s on %s", ip, proxy.Spec.NodeName)
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
