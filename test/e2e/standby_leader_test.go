package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// Two replicas with leader election in standby mode: the controller is
// killed and some Services change; only the leader writes (takes them
// over). The leader is SIGKILLed: the new leader finds our slices and keeps
// those Services served (no hand-back, no takeover of the others), and
// hands them back once the controller returns.
func TestStandbyLeaderElection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t, cp)
	f := newFleet(cp, ns, 60)
	for i := 0; i < 6; i++ {
		f.addService(t, fmt.Sprintf("web-%d", i), 2)
	}
	controllerCurrent(t, cp, f, 60*time.Second)
	lease := []string{"--leader-elect", "--leader-elect-resource-namespace", ns, "--leader-elect-lease-duration", testLease.String(),
		"--leader-elect-renew-deadline", testRenew.String(), "--leader-elect-retry-period", testRetry.String(), "--handback-hold=5s"}
	a := startStandby(t, cp, ns, lease...)
	a.waitLine(t, "leading: writing from now on", 20*time.Second)
	b := startStandby(t, cp, ns, lease...)
	b.waitLine(t, "standing by", 20*time.Second)

	cp.KillControllerManager()
	svcs := f.services()
	changed := map[string]time.Time{}
	for _, svc := range svcs[:3] {
		changed[svc] = time.Now()
		f.flip(t, svc)
	}
	waitTakenOver(t, cp, f, changed)
	// check says, per Service, how long the controller has been behind and
	// why, dated from the flip (Ready transitions are stored in seconds).
	// A drifting Endpoints object of the Endpoints controller (not running
	// here), seeded by hand: the last Service's Pods listed not ready.
	last := svcs[len(svcs)-1]
	seedDriftingEndpoints(t, ctx, cp, ns, f, last)
	checkAndExplainReportTheLag(t, cp, ns, changed, last)
	if w := b.writes(t); w != 0 {
		t.Fatalf("the replica standing by wrote %v slices", w)
	}

	_ = a.cmd.Process.Kill()
	<-a.done
	b.waitLine(t, "leading: writing from now on", testLease+5*time.Second)
	time.Sleep(standbyThreshold + time.Second)
	within(t, "the new leader serves the Services taken over", 5*time.Second, func() bool {
		s := standbyStates(t, b)
		return s["serving"] == 3 && s["standby"] == 3
	})
	by, _ := sliceStates(t, cp, ns)
	for i, svc := range svcs {
		_, ours := by[oursLabel][svc]
		if ours != (i < 3) {
			t.Fatalf("after the failover svc/%s has ours %v (%q)", svc, ours, by[oursLabel][svc])
		}
	}
	if n := value(b.metrics(t), "kubectl_slices_handbacks_total", nil); n != 0 {
		t.Fatalf("the new leader handed back %v Services while the controller is down", n)
	}
	// A flip on a served Service is the new leader's to write.
	start := time.Now()
	f.flip(t, svcs[0])
	within(t, "the new leader writes a flip", 2*time.Second, func() bool { return endpointState(t, cp, ns, svcs[0]) == f.desired(svcs[0]) })
	t.Logf("flip written %s after it", time.Since(start).Round(time.Millisecond))

	if err := cp.StartControllerManager(ctx); err != nil {
		t.Fatal(err)
	}
	within(t, "handed back by the new leader", 60*time.Second, func() bool {
		by, _ := sliceStates(t, cp, ns)
		for _, svc := range svcs {
			if _, ours := by[oursLabel][svc]; ours || by[controllerLabel][svc] != f.desired(svc) {
				return false
			}
		}
		return true
	})
}

// seedDriftingEndpoints creates the Endpoints controller's object for
// Service last as it drifted: every one of its Pods listed not ready.
func seedDriftingEndpoints(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, ns string, f *fleet, last string) {
	stuck := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: last, Namespace: ns, Labels: map[string]string{"endpoints.kubernetes.io/managed-by": "endpoint-controller"}}}
	sub := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}
	for _, a := range strings.Fields(f.desired(last)) {
		sub.NotReadyAddresses = append(sub.NotReadyAddresses, corev1.EndpointAddress{IP: strings.Split(a, ":")[0]})
	}
	stuck.Subsets = []corev1.EndpointSubset{sub}
	if _, err := cp.Admin.CoreV1().Endpoints(ns).Create(ctx, stuck, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// checkAndExplainReportTheLag: check and explain say, per changed Service, how
// long kube-controller-manager has been behind (dated from the change) and
// why, and report Service last's drifting Endpoints object, alone.
func checkAndExplainReportTheLag(t *testing.T, cp *controlplane.ControlPlane, ns string, changed map[string]time.Time, last string) {
	res := kubectl(t, cp, "slices", "check", "-n", ns, "-o", "json")
	var report struct {
		Findings []struct{ Service, Kind, Message string }
	}
	if err := json.Unmarshal([]byte(res.Stdout), &report); err != nil {
		t.Fatalf("check -o json: %v\n%s%s", err, res.Stdout, res.Stderr)
	}
	behind := regexp.MustCompile(`kube-controller-manager has been behind for (\d+)s: pod (web-\d+)-\d+ became (not )?ready and is still published (not )?ready`)
	seen, example := map[string]bool{}, ""
	for _, f := range report.Findings {
		m := behind.FindStringSubmatch(f.Message)
		if m == nil {
			continue
		}
		secs, _ := strconv.Atoi(m[1])
		at, ok := changed[f.Service]
		if d := time.Duration(secs)*time.Second - time.Since(at); !ok || m[2] != f.Service || d > 2*time.Second || d < -2*time.Second {
			t.Fatalf("check on svc/%s: %q (%s after its change)", f.Service, f.Message, time.Since(at).Round(time.Second))
		}
		seen[f.Service] = true
		example = f.Message
	}
	if len(seen) != len(changed) {
		t.Fatalf("check reported the controller's lag for %v, want %d Services:\n%s", seen, len(changed), res.Stdout)
	}
	// explain says the same in its diagnosis.
	var one string
	for svc := range changed {
		one = svc
	}
	ex := kubectl(t, cp, "slices", "explain", "svc/"+one, "-n", ns)
	if !behind.MatchString(ex.Stdout) || !strings.Contains(ex.Stdout, "Diagnosis:") {
		t.Fatalf("explain svc/%s does not say how long the controller has been behind:\n%s%s", one, ex.Stdout, ex.Stderr)
	}
	ex = kubectl(t, cp, "slices", "explain", "svc/"+last, "-n", ns)
	if !strings.Contains(ex.Stdout, "Endpoints: kube-controller-manager's Endpoints object disagrees with the Pods in 2 addresses") {
		t.Fatalf("explain svc/%s does not report the drifting Endpoints object:\n%s%s", last, ex.Stdout, ex.Stderr)
	}
	drift := 0
	for _, f := range report.Findings {
		if f.Kind == "EndpointsDrift" {
			drift++
			if f.Service != last || !strings.Contains(f.Message, "in 2 addresses") || !strings.Contains(f.Message, "is listed not ready, its Pod is ready") {
				t.Fatalf("check: EndpointsDrift on svc/%s: %q", f.Service, f.Message)
			}
			t.Logf("check: %s", f.Message)
		}
	}
	if drift != 1 {
		t.Fatalf("check reported %d drifting Endpoints objects, want 1 (svc/%s):\n%s", drift, last, res.Stdout)
	}
	t.Logf("check: %s", example)
}
