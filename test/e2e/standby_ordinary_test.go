package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// sharedServices is how many Services select the one Pod a label patch
// re-adds (the red team's figure).
const sharedServices = 200

// ordinary is the model of TestStandbyOrdinaryChanges: which Pods each
// Service should publish, from what the test did.
type ordinary struct {
	cp   *controlplane.ControlPlane
	ns   string
	pods map[string]controlplane.PodSpec
	want map[string][]string // Service -> Pod names
}

func (o *ordinary) pod(t *testing.T, s controlplane.PodSpec) {
	t.Helper()
	if _, err := o.cp.Pod(context.Background(), o.ns, s); err != nil {
		t.Fatalf("pod %s: %v", s.Name, err)
	}
	o.pods[s.Name] = s
}

// rendered is what the Service's slices should publish, as sliceStates
// renders them.
func (o *ordinary) rendered(svc string) string {
	var out []string
	for _, name := range o.want[svc] {
		p := o.pods[name]
		out = append(out, fmt.Sprintf("%s:%v:%s", p.IPs[0], p.Ready, nodeZone(p.Node)))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// current waits until the controller's slices of every Service publish
// what it should, and returns how long that took.
func (o *ordinary) current(t *testing.T, limit time.Duration) time.Duration {
	t.Helper()
	var bad string
	start := time.Now()
	for time.Since(start) < limit {
		by, _ := sliceStates(t, o.cp, o.ns)
		bad = ""
		for svc := range o.want {
			// A Service with no slices of the controller is not current,
			// whatever it should publish.
			if got, ok := by[controllerLabel][svc]; !ok || got != o.rendered(svc) {
				bad = fmt.Sprintf("svc/%s: the controller publishes %q (slices: %v), desired %q", svc, got, ok, o.rendered(svc))
				break
			}
		}
		if bad == "" {
			return time.Since(start)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the controller did not catch up within %s: %s", limit, bad)
	return 0
}

func (o *ordinary) labelPod(t *testing.T, name string, labels map[string]any) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if _, err := o.cp.Admin.CoreV1().Pods(o.ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("label pod %s: %v", name, err)
	}
}

func (o *ordinary) selectService(t *testing.T, name, app string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"selector":{"app":%q}}}`, app)
	if _, err := o.cp.Admin.CoreV1().Services(o.ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("select svc/%s: %v", name, err)
	}
}

// healthy checks, a threshold and 2 s after a case's last change, that the
// loop took nothing over and wrote nothing.
func healthy(t *testing.T, o *ordinary, loop replica, what string, caughtUp time.Duration) {
	t.Helper()
	time.Sleep(standbyThreshold + 2*time.Second)
	mf := loop.metrics(t)
	takeovers, writes := value(mf, "kubectl_slices_takeovers_total", nil), value(mf, "kubectl_slices_changes_total", nil)
	by, _ := sliceStates(t, o.cp, o.ns)
	t.Logf("%s: the controller current %s after it; %v takeovers, %v writes of ours, %d Services with slices of ours (load %s)",
		what, caughtUp.Round(time.Millisecond), takeovers, writes, len(by[oursLabel]), load())
	if takeovers != 0 || writes != 0 || len(by[oursLabel]) != 0 {
		t.Fatalf("%s beside a healthy controller: %v takeovers, %v writes, slices of ours for %v\n%s",
			what, takeovers, writes, sortedKeys(by[oursLabel]), loop.output())
	}
}

// Ordinary changes beside a healthy kube-controller-manager, each on Pods
// Ready for longer than the threshold (which the loop once dated the
// difference from): no takeover, no write of ours.
//
//  1. A Pod relabelled out of its Service and back 2 s later.
//  2. A blue/green selector switch.
//  3. One label patch re-adding a Pod that 200 Services select (the
//     controller writes them at its client's 20 requests a second, so the
//     last waits longer than the threshold behind the others).
//  4. For 15 s, a Pod's labels flipped and another Service's selector
//     switched every 50 ms: the controller's slices trail the churn by
//     more than the threshold in all, yet keep moving.
func TestStandbyOrdinaryChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllers(ctx, "endpointslice-controller"); err != nil {
		t.Fatal(err)
	}
	o := &ordinary{cp: cp, ns: newNamespace(t, cp), pods: map[string]controlplane.PodSpec{}, want: map[string][]string{}}
	i := 0
	group := func(app string, n int) []string {
		var names []string
		for range n {
			i++
			s := podSpec(app, i, 40)
			o.pod(t, s)
			names = append(names, s.Name)
		}
		return names
	}
	for _, name := range []string{"relabel", "flap"} {
		mustService(t, cp, service(o.ns, name))
		o.want[name] = group(name, 3)
	}
	mustService(t, cp, service(o.ns, "bg", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "blue"} }))
	blue, green := group("blue", 2), group("green", 2)
	o.want["bg"] = blue
	mustService(t, cp, service(o.ns, "sel", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "sel-a"} }))
	o.want["sel"] = group("sel-a", 2)
	group("sel-b", 2)
	// The shared Pod starts without the label the 200 Services select.
	shared := group("lonely", 1)[0]
	for n := range sharedServices {
		name := fmt.Sprintf("many-%d", n)
		mustService(t, cp, service(o.ns, name, func(s *corev1.Service) { s.Spec.Selector = map[string]string{"shared": "yes"} }))
		o.want[name] = nil
	}
	o.current(t, 2*time.Minute)
	loop := startStandby(t, cp, o.ns)
	// Every Pod's Ready transition is now older than the threshold.
	time.Sleep(standbyThreshold + time.Second)
	healthy(t, o, loop, "at rest", 0)

	// 1. Relabelled out and back 2 s later.
	pod := o.want["relabel"][0]
	o.labelPod(t, pod, map[string]any{"app": "elsewhere"})
	time.Sleep(2 * time.Second)
	o.labelPod(t, pod, map[string]any{"app": "relabel"})
	healthy(t, o, loop, "a Pod relabelled out and back", o.current(t, 30*time.Second))

	// 2. Blue/green.
	o.selectService(t, "bg", "green")
	o.want["bg"] = green
	healthy(t, o, loop, "a blue/green selector switch", o.current(t, 30*time.Second))

	// 3. One label patch re-adds a Pod to 200 Services.
	o.labelPod(t, shared, map[string]any{"shared": "yes"})
	for n := range sharedServices {
		o.want[fmt.Sprintf("many-%d", n)] = []string{shared}
	}
	healthy(t, o, loop, fmt.Sprintf("one label patch re-adding a Pod to %d Services", sharedServices), o.current(t, 60*time.Second))

	// 4. Churn: a Pod's labels and a Service's selector every 50 ms.
	flapper := o.want["flap"][0]
	changes := 0
	for end, in := time.Now().Add(15*time.Second), false; time.Now().Before(end); in = !in {
		app, sel := "flap-off", "sel-a"
		if in {
			app, sel = "flap", "sel-b"
		}
		o.labelPod(t, flapper, map[string]any{"app": app})
		o.selectService(t, "sel", sel)
		changes += 2
		time.Sleep(50 * time.Millisecond)
	}
	// End with the Pod in and the selector on sel-a.
	o.labelPod(t, flapper, map[string]any{"app": "flap"})
	o.selectService(t, "sel", "sel-a")
	t.Logf("churn: %d label and selector patches in 15 s", changes+2)
	healthy(t, o, loop, "a Pod's labels and a Service's selector flipped every 50 ms for 15 s", o.current(t, 30*time.Second))

	h := lagHistogram(t, loop)
	t.Logf("controller lag over every case: %d differences closed, p50 %.3fs p99 %.3fs, max bucket <= %s",
		h.GetSampleCount(), histogramQuantile(h, 0.5), histogramQuantile(h, 0.99), maxBucket(h))
}
