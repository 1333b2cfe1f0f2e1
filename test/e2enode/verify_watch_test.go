package e2enode

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/promrecord"
)

// watchRound is verify --watch's --interval and --sync-period here, the
// shortest it allows: kube-proxy's own sync period, so that a change is
// read once kube-proxy has had time to apply it. Every status below is
// due within a round of its cause plus the round's reads (bound).
const (
	watchRound = 30 * time.Second
	watchBound = watchRound + 15*time.Second
)

// TestVerifyWatch runs `kubectl slices verify --watch` beside the two
// real nodes and reads what it says where a platform team looks: its
// /metrics and the Events on the Nodes. Ordinary churn for two minutes
// (readiness flips, a scale up and down) keeps every node and DNS replica
// OK with no Event; then a DNAT rule deleted by hand on node B, a frozen
// kube-proxy on node A with a backend flipped, and a CoreDNS replica cut
// off from the API server (its watch stalled: it answers what it last saw)
// each turn DRIFT within a round or two, with a DataPlaneDrift Event on
// the Node (or the DNS Pod) naming the endpoint, and each recovers once
// repaired (a DataPlaneRecovered Event).
func TestVerifyWatch(t *testing.T) {
	requireNode(t)
	proxies := kubeProxyPods(t)
	requireCoreDNS(t)
	replicas := coreDNSPods(t)
	ns := newNamespace(t, nil)
	web := func(name, zone string) string { return workloadPodIn(name, map[string]string{"app": "web"}, zone) }
	kubectl(t, strings.Join([]string{webService, web("web-a1", zoneA), web("web-b1", zoneB), web("web-b2", zoneB)}, "---\n"),
		"apply", "-n", ns, "-f", "-").ok(t)
	backends := runningPods(t, ns, "app=web", 3, true)
	syncSlices(t, ns, backends)
	w := startVerifyWatch(t, "--all", "-n", ns, "--interval", watchRound.String(), "--sync-period", watchRound.String())
	a, b := node.Name(), nodeB.Name()
	dnsA, dnsB := "kube-system/"+replicas[a].Name, "kube-system/"+replicas[b].Name
	// The first round runs at once: a node still applying the slices just
	// written is PENDING then, OK at the next.
	w.waitStatus(t, watchBound, map[string]string{a: "OK", b: "OK", dnsA: "OK", dnsB: "OK"})

	t.Run("ChurnStaysOK", func(t *testing.T) {
		start := time.Now()
		stop := w.watchStatuses(t, 2*time.Second)
		b1 := backendNamed(t, backends, "web-b1")
		for round := 0; time.Since(start) < 2*time.Minute; round++ {
			makeNotReady(t, b1)
			syncSlices(t, ns, backends, "web-b1")
			time.Sleep(15 * time.Second)
			makeReadyAgain(t, b1)
			syncSlices(t, ns, backends)
			if round == 0 {
				kubectl(t, web("web-a2", zoneA), "apply", "-n", ns, "-f", "-").ok(t)
				scaled := runningPods(t, ns, "app=web", 4, true)
				syncSlices(t, ns, scaled)
				time.Sleep(15 * time.Second)
				kubectl(t, "", "delete", "pod", "-n", ns, "web-a2", "--wait").ok(t)
				syncSlices(t, ns, backends)
			}
			time.Sleep(15 * time.Second)
		}
		seen := stop()
		for target, sts := range seen {
			if sts["DRIFT"] || sts["UNKNOWN"] {
				t.Errorf("%s was %v during ordinary churn", target, keys(sts))
			}
		}
		if evs := dataPlaneEvents(t, start); len(evs) > 0 {
			t.Errorf("Events during ordinary churn: %v", evs)
		}
		t.Logf("%s of churn: statuses seen %v", time.Since(start).Round(time.Second), seen)
	})

	t.Run("RuleDeletedOnNodeB", func(t *testing.T) {
		rec := w.record(t, 15*time.Second)
		start := time.Now()
		b1 := backendNamed(t, backends, "web-b1").Status.PodIP + ":8000"
		dnat := dnatRule(t, proxies[b], b1)
		kubectl(t, "", "exec", "-n", "kube-system", proxies[b].Name, "--", "sh", "-c", `eval "iptables -w 5 -t nat -D ${1#-A }"`, "sh", dnat).ok(t)
		w.waitStatus(t, watchBound, map[string]string{a: "OK", b: "DRIFT"})
		w.waitEvent(t, start, "DataPlaneDrift", "Node", b, "endpoint "+b1+" missing")
		t.Logf("DRIFT on node B %s after the rule was deleted", time.Since(start).Round(time.Second))
		// Left drifting past the alert's minute, while its samples are
		// recorded: the alert is then tried on them.
		time.Sleep(80 * time.Second)
		driftAlert(t, rec.stop(), b)
		fixed := time.Now()
		proxies = restartKubeProxies(t, proxies[b])
		w.waitStatus(t, watchBound+30*time.Second, map[string]string{a: "OK", b: "OK"})
		w.waitEvent(t, fixed, "DataPlaneRecovered", "Node", b, "")
	})

	t.Run("FrozenKubeProxyOnNodeA", func(t *testing.T) {
		cont := stopProcess(t, processOf(t, "kube-proxy", "--hostname-override="+a))
		a1 := backendNamed(t, backends, "web-a1")
		makeNotReady(t, a1)
		syncSlices(t, ns, backends, "web-a1")
		start := time.Now()
		w.waitStatus(t, watchBound, map[string]string{a: "DRIFT", b: "OK"})
		w.waitEvent(t, start, "DataPlaneDrift", "Node", a, a1.Status.PodIP+":8000")
		t.Logf("DRIFT on node A %s after the flip", time.Since(start).Round(time.Second))
		fixed := time.Now()
		cont()
		w.waitStatus(t, watchBound, map[string]string{a: "OK", b: "OK"})
		w.waitEvent(t, fixed, "DataPlaneRecovered", "Node", a, "")
		makeReadyAgain(t, a1)
		syncSlices(t, ns, backends)
	})

	t.Run("DNSReplicaCutOff", func(t *testing.T) {
		// Replica B's watch of the API server stalls (its packets to the
		// kubernetes Service dropped in its own network namespace): it
		// keeps answering what it last saw, db-b ready, after db-b turned
		// not ready.
		db := func(name, zone string) string { return workloadPodIn(name, map[string]string{"app": "db"}, zone) }
		kubectl(t, strings.Join([]string{headlessDB, db("db-a", zoneA), db("db-b", zoneB)}, "---\n"), "apply", "-n", ns, "-f", "-").ok(t)
		pods := runningPods(t, ns, "app=db", 2, true)
		kubectl(t, "", "slices", "sync", "svc/db", "-n", ns).ok(t)
		w.waitStatus(t, watchBound, map[string]string{dnsA: "OK", dnsB: "OK"})
		restore := cutOff(t, replicas[b], getService(t, "default", "kubernetes").Spec.ClusterIP)
		dbB := backendNamed(t, pods, "db-b")
		makeNotReady(t, dbB)
		kubectl(t, "", "slices", "sync", "svc/db", "-n", ns).ok(t)
		start := time.Now()
		w.waitStatus(t, 2*watchBound, map[string]string{dnsA: "OK", dnsB: "DRIFT"})
		w.waitEvent(t, start, "DataPlaneDrift", "Pod", replicas[b].Name, "db."+ns+".svc.cluster.local.")
		t.Logf("replica B DRIFT %s after db-b turned not ready", time.Since(start).Round(time.Second))
		fixed := time.Now()
		restore()
		w.waitStatus(t, 3*time.Minute, map[string]string{dnsA: "OK", dnsB: "OK"})
		w.waitEvent(t, fixed, "DataPlaneRecovered", "Pod", replicas[b].Name, "")
		t.Logf("replica B OK %s after its connection was restored", time.Since(fixed).Round(time.Second))
	})

	out := w.stop(t)
	for _, want := range []string{"node " + b + ": DRIFT: Service " + ns + "/web port http: endpoint", "DataPlaneRecovered: node " + a} {
		if !strings.Contains(out, want) {
			t.Errorf("its output lacks %q:\n%s", want, out)
		}
	}
}

// makeReadyAgain switches the workload Pod's readiness back on and waits
// until the kubelet's probe reports it.
func makeReadyAgain(t *testing.T, pod corev1.Pod) {
	t.Helper()
	if code, body, err := httpDo("POST", fmt.Sprintf("http://%s:8000/ready/on", pod.Status.PodIP)); err != nil || code != 200 {
		t.Fatalf("POST /ready/on on %s: %d %q %v", pod.Name, code, body, err)
	}
	eventually(t, 30*time.Second, pod.Name+" ready", func() error {
		p, err := cluster.Admin.CoreV1().Pods(pod.Namespace).Get(context.Background(), pod.Name, metav1.GetOptions{})
		if err != nil || !podReady(p) {
			return fmt.Errorf("not ready yet (%v)", err)
		}
		return nil
	})
}

// verifyWatch is a running `kubectl slices verify --watch`.
type verifyWatch struct {
	cmd  *exec.Cmd
	addr string
	mu   sync.Mutex
	out  bytes.Buffer
}

// startVerifyWatch starts verify --watch with args, serving its metrics on
// a free loopback port; a cleanup stops it.
func startVerifyWatch(t testing.TB, args ...string) *verifyWatch {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	w := &verifyWatch{addr: addr}
	w.cmd = exec.Command(cluster.Kubectl(), append([]string{"slices", "verify", "--watch", "--health-addr", addr}, args...)...)
	w.cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig,
		"PATH="+artifacts+string(os.PathListSeparator)+cluster.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	w.cmd.Stdout, w.cmd.Stderr = lockedWriter{&w.mu, &w.out}, lockedWriter{&w.mu, &w.out}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.stop(t) })
	return w
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (w *verifyWatch) output() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// stop sends SIGTERM, wants exit 0 within 15 s, and returns the output.
func (w *verifyWatch) stop(t testing.TB) string {
	t.Helper()
	if w.cmd.ProcessState != nil {
		return w.output()
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("verify --watch on SIGTERM: %v\n%s", err, w.output())
		}
	case <-time.After(15 * time.Second):
		_ = w.cmd.Process.Kill()
		<-done
		t.Errorf("verify --watch did not stop within 15 s of SIGTERM\n%s", w.output())
	}
	return w.output()
}

// statuses reads the status gauge: target → the status held.
func (w *verifyWatch) statuses() (map[string]string, error) {
	mf, err := w.scrape()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range mf["kubectl_slices_dataplane_status"].GetMetric() {
		if m.GetGauge().GetValue() != 1 {
			continue
		}
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		out[l["target"]] = l["status"]
	}
	return out, nil
}

func (w *verifyWatch) unknownClass(t *testing.T, target string) string {
	t.Helper()
	mf, err := w.scrape()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mf["kubectl_slices_dataplane_unknown_info"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["target"] == target {
			return l["class"]
		}
	}
	return ""
}

func (w *verifyWatch) scrape() (promrecord.Scrape, error) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + w.addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// waitStatus waits until every target in want holds its status.
func (w *verifyWatch) waitStatus(t testing.TB, timeout time.Duration, want map[string]string) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("verify --watch reporting %v", want), func() error {
		got, err := w.statuses()
		if err != nil {
			return err
		}
		for target, s := range want {
			if got[target] != s {
				return fmt.Errorf("statuses %v\n%s", got, w.output())
			}
		}
		return nil
	})
}

// watchStatuses samples the statuses every period until the returned
// func, which returns every status seen per target.
func (w *verifyWatch) watchStatuses(t *testing.T, period time.Duration) func() map[string]map[string]bool {
	seen := map[string]map[string]bool{}
	var mu sync.Mutex
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			if got, err := w.statuses(); err == nil {
				mu.Lock()
				for target, s := range got {
					if seen[target] == nil {
						seen[target] = map[string]bool{}
					}
					seen[target][s] = true
				}
				mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() map[string]map[string]bool {
		close(done)
		<-stopped
		return seen
	}
}

// dataPlaneEvents lists the DataPlane* Events recorded since start.
func dataPlaneEvents(t *testing.T, since time.Time) []corev1.Event {
	t.Helper()
	list, err := cluster.Admin.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		last := e.LastTimestamp.Time
		if last.IsZero() {
			last = e.EventTime.Time
		}
		if strings.HasPrefix(e.Reason, "DataPlane") && !last.Before(since.Truncate(time.Second)) {
			out = append(out, e)
		}
	}
	return out
}

// waitEvent waits for an Event of reason on the object, recorded since
// start, whose message holds msg.
func (w *verifyWatch) waitEvent(t *testing.T, since time.Time, reason, kind, name, msg string) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("a %s Event on %s %s", reason, kind, name), func() error {
		evs := dataPlaneEvents(t, since)
		for _, e := range evs {
			if e.Reason == reason && e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name && strings.Contains(e.Message, msg) {
				return nil
			}
		}
		return fmt.Errorf("Events %v", evs)
	})
}

// cutOff drops, in the Pod's own network namespace, its packets to and
// from ip (TCP 443) both ways: a watch whose acknowledgements alone were
// dropped would still be delivered. The host's iptables runs there
// (nsenter); the returned func, also a cleanup, removes the rules.
func cutOff(t *testing.T, pod corev1.Pod, ip string) func() {
	t.Helper()
	pid := strconv.Itoa(podProcess(t, pod))
	rules := [][]string{
		{"OUTPUT", "-d", ip, "-p", "tcp", "--dport", "443", "-j", "DROP"},
		{"INPUT", "-s", ip, "-p", "tcp", "--sport", "443", "-j", "DROP"},
	}
	run := func(op string) error {
		for _, rule := range rules {
			out, err := exec.Command("nsenter", append([]string{"-t", pid, "-n", "iptables", "-w", "5", op}, rule...)...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("iptables %s %v in %s's network namespace: %v: %s", op, rule, pod.Name, err, out)
			}
		}
		return nil
	}
	if err := run("-I"); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	restore := func() {
		once.Do(func() {
			if err := run("-D"); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(restore)
	return restore
}

// podProcess finds, among the processes of the test's PID namespace, the
// first process of the Pod's container: its environment's HOSTNAME is the
// Pod's name, as the runtime sets it.
func podProcess(t *testing.T, pod corev1.Pod) int {
	t.Helper()
	want := []byte("HOSTNAME=" + pod.Name + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var found []int
	for _, d := range dirs {
		env, err := os.ReadFile(d)
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		var pid int
		fmt.Sscanf(strings.Split(d, "/")[2], "%d", &pid)
		found = append(found, pid)
	}
	slices.Sort(found)
	if len(found) == 0 {
		t.Fatalf("no process of Pod %s", pod.Name)
	}
	return found[0]
}

// verifierRecording is a verify --watch's scrapes every interval from start.
type verifierRecording struct {
	start    time.Time
	interval time.Duration
	scrapes  []promrecord.Scrape
	done     chan struct{}
	stopped  chan struct{}
}

// record scrapes the verifier's /metrics every interval, from the next
// whole second (promtool places samples on whole seconds), until stop.
func (w *verifyWatch) record(t *testing.T, interval time.Duration) *verifierRecording {
	r := &verifierRecording{start: time.Now().Truncate(time.Second).Add(time.Second), interval: interval,
		done: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		defer close(r.stopped)
		for k := 0; ; k++ {
			select {
			case <-r.done:
				return
			case <-time.After(time.Until(r.start.Add(time.Duration(k) * interval))):
			}
			mf, err := w.scrape()
			if err != nil {
				mf = nil
			}
			r.scrapes = append(r.scrapes, mf)
		}
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop ends the recording and returns it.
func (r *verifierRecording) stop() *verifierRecording {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	<-r.stopped
	return r
}

// driftAlert runs promtool on the recorded scrapes: KubectlSlicesDataPlaneDrift
// pending (silent) at node's first DRIFT scrape, firing for node alone at
// its last, a minute or more later. Skipped, saying so, without promtool.
func driftAlert(t *testing.T, rec *verifierRecording, node string) {
	t.Helper()
	dir := os.Getenv("KUBECTL_SLICES_PROMTOOL")
	if dir == "" {
		t.Log("KUBECTL_SLICES_PROMTOOL is not set: the drift alert is not tried on these samples")
		return
	}
	first, last := -1, -1
	for i, sc := range rec.scrapes {
		for _, m := range sc["kubectl_slices_dataplane_status"].GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["target"] == node && l["status"] == "DRIFT" && m.GetGauge().GetValue() == 1 {
				if first < 0 {
					first = i
				}
				last = i
			}
		}
	}
	if first < 0 || time.Duration(last-first)*rec.interval < time.Minute {
		t.Fatalf("node %s DRIFT in scrapes %d to %d of %d: not a minute's worth to try the alert on", node, first, last, len(rec.scrapes))
	}
	target := promrecord.Target{Labels: map[string]string{"job": "kubectl-slices-verify", "namespace": "ops", "pod": "verifier"}, Scrapes: rec.scrapes}
	firing := []promrecord.Firing{{Labels: map[string]string{"severity": "warning", "namespace": "ops", "target": node},
		Annotations: map[string]string{
			"summary":     "A node's service proxy routes by what the EndpointSlices no longer say.",
			"description": "The kubectl-slices verifier in ops has found node " + node + " programming other endpoints than the EndpointSlices hold, past kube-proxy's sync period, for a minute (an Event DataPlaneDrift on the Node names the Service and the endpoint).",
			"runbook_url": "https://github.com/kubectl-slices/kubectl-slices/blob/main/docs/runbook.md#kubectlslicesdataplanedrift",
		}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := promrecord.Test{Promtool: dir, Rules: "../../monitoring/kubectl-slices.rules.yaml", Start: rec.start, Interval: rec.interval,
		Series: promrecord.Series([]promrecord.Target{target}, "kubectl_slices_dataplane_"),
		Alerts: []promrecord.Alert{
			{Name: "KubectlSlicesDataPlaneDrift", EvalTime: time.Duration(first) * rec.interval},
			{Name: "KubectlSlicesDataPlaneDrift", EvalTime: time.Duration(last) * rec.interval, Firing: firing},
		}}.Run(ctx, t.TempDir())
	if err != nil {
		t.Fatalf("KubectlSlicesDataPlaneDrift on the verifier's samples (DRIFT from +%s to +%s): %v\n%s", time.Duration(first)*rec.interval,
			time.Duration(last)*rec.interval, err, out)
	}
	t.Logf("on the verifier's recorded samples: KubectlSlicesDataPlaneDrift silent at +%s (node %s's first DRIFT), firing for it alone at +%s",
		time.Duration(first)*rec.interval, node, time.Duration(last)*rec.interval)
}
