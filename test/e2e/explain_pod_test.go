package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// podReport is the part of explain pod/NAME -o json the tests read.
type podReport struct {
	Schema   string `json:"schema"`
	Source   string `json:"source"`
	InSync   bool   `json:"inSync"`
	Services []struct {
		Service struct {
			Name string `json:"name"`
		} `json:"service"`
		Decision     json.RawMessage `json:"decision"`
		Published    bool            `json:"published"`
		Publications []publication   `json:"publications"`
	} `json:"services"`
	NearMisses []struct {
		Service, Label, Want, Have string
	} `json:"nearMisses"`
	Diagnosis struct{ Summary, Command string } `json:"diagnosis"`
}

type publication struct {
	Kind, Namespace, Name, Service, ManagedBy, Role, AddressType, TargetRef string
	Stale, Desired                                                          bool
	Problems                                                                []string
}

type ipReport struct {
	Schema       string `json:"schema"`
	Family       string `json:"family"`
	Found        bool   `json:"found"`
	InSync       bool   `json:"inSync"`
	Holders      []struct{ Namespace, Name string }
	Publications []publication `json:"publications"`
}

func decode(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		t.Fatalf("-o json: %v\n%s", err, r.Stdout)
	}
}

// A Pod selected by two Services, one of which asks for a named port the
// Pod lacks: both listed, the second with PortNotFound, exit 1 (it gets no
// traffic from that Service).
func TestExplainPodTwoServicesOneLacksPort(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustService(t, shared, service(ns, "admin", func(s *corev1.Service) {
		s.Spec.Selector = map[string]string{"app": "web"}
		s.Spec.Ports = []corev1.ServicePort{controlplane.ServicePort("metrics", 9090, intstr.FromString("metrics"))}
	}))
	mustPods(t, shared, ns, podSpec("web", 0, 70))
	slices(t, "sync", "svc/web", "svc/admin", "-n", ns).mustCode(t, 0)

	r := slices(t, "explain", "pod/web-0", "-n", ns).mustCode(t, 1)
	for _, want := range []string{"Service svc/admin", "Service svc/web", "PortNotFound", "no target port for metrics", "published by svc/web as desired"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("explain pod lacks %q:\n%s", want, r.Stdout)
		}
	}
	var rep podReport
	decode(t, slices(t, "explain", "pod/web-0", "-n", ns, "-o", "json").mustCode(t, 1), &rep)
	if rep.Schema != "kubectl-slices.explain-pod/v1" || rep.Source != "cluster" || rep.InSync || len(rep.Services) != 2 {
		t.Fatalf("report %+v", rep)
	}
	admin, web := rep.Services[0], rep.Services[1]
	if admin.Service.Name != "admin" || admin.Published || !strings.Contains(compact(t, admin.Decision), `"reason":"PortNotFound"`) ||
		!strings.Contains(compact(t, admin.Decision), `"missingPorts":["metrics"]`) {
		t.Errorf("admin: %s", admin.Decision)
	}
	if web.Service.Name != "web" || !web.Published || len(web.Publications) != 1 || !web.Publications[0].Desired || web.Publications[0].Role != "ours" {
		t.Errorf("web: %+v", web)
	}
	// Without the port-lacking Service the Pod is published as desired: 0.
	if err := shared.Admin.CoreV1().Services(ns).Delete(context.Background(), "admin", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	slices(t, "explain", "pods/web-0", "-n", ns).mustCode(t, 0)
	sameAsLocal(t, shared, ns, "explain", "pod/web-0")

	// Pod names complete through kubectl, as Service names do.
	r = kubectl(t, shared, "__complete", "slices", "explain", "-n", ns, "pod/w").mustCode(t, 0)
	if got := completions(r.Stdout); strings.Join(got, " ") != "pod/web-0" {
		t.Errorf("__complete explain pod/w: %v", got)
	}
	slices(t, "explain", "pod/web-9", "-n", ns).mustCode(t, 3)
}

// A Service whose selector has a typo is the Pod's near miss, naming the
// differing label.
func TestExplainPodNearMiss(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "web", "tier": "frontend"} }))
	p := podSpec("web", 0, 71)
	p.Labels = map[string]string{"app": "web", "tier": "fronted"}
	mustPods(t, shared, ns, p)
	r := slices(t, "explain", "pod/web-0", "-n", ns).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "near miss: svc/web wants tier=frontend; the Pod has tier=fronted") ||
		!strings.Contains(r.Stdout, "no Service of namespace "+ns+" selects pod web-0; nearest miss: svc/web") {
		t.Errorf("explain pod:\n%s", r.Stdout)
	}
	var rep podReport
	decode(t, slices(t, "explain", "pod", "web-0", "-n", ns, "-o", "json").mustCode(t, 0), &rep)
	if len(rep.Services) != 0 || len(rep.NearMisses) != 1 || rep.NearMisses[0].Label != "tier" || rep.NearMisses[0].Have != "fronted" {
		t.Errorf("report %+v", rep)
	}
}

// Each excluded or not-ready Pod's row is the one explain svc shows for
// it, field for field.
func TestExplainPodReasonsMatchService(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	notReady, term, noIP, gone := podSpec("web", 0, 72), podSpec("web", 1, 72), podSpec("web", 2, 72), podSpec("web", 3, 72)
	notReady.Ready = false
	term.Terminating = true
	noIP.IPs = nil
	gone.Node = "node-gone"
	mustPods(t, shared, ns, notReady, term, noIP, gone)
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)

	var svc struct {
		Pods []json.RawMessage `json:"pods"`
	}
	decode(t, slices(t, "explain", "svc/web", "-n", ns, "-o", "json").mustCode(t, 0), &svc)
	rows := map[string]json.RawMessage{}
	for _, p := range svc.Pods {
		var named struct{ Name string }
		_ = json.Unmarshal(p, &named)
		rows[named.Name] = p
	}
	for _, c := range []struct {
		pod, reason string
		code        int
	}{{"web-0", `"ready": false`, 0}, {"web-1", `"terminating": true`, 0}, {"web-2", `"reason": "NoPodIP"`, 1}, {"web-3", `"reason": "NodeNotFound"`, 1}} {
		var rep podReport
		decode(t, slices(t, "explain", "pod/"+c.pod, "-n", ns, "-o", "json").mustCode(t, c.code), &rep)
		if len(rep.Services) != 1 {
			t.Fatalf("%s: %+v", c.pod, rep)
		}
		got, want := compact(t, rep.Services[0].Decision), compact(t, rows[c.pod])
		if got != want || !strings.Contains(string(rep.Services[0].Decision), c.reason) {
			t.Errorf("%s: explain pod row\n%s\nexplain svc row\n%s", c.pod, got, want)
		}
	}
	// -l explains every Pod it selects: a JSON array of reports, by name.
	var all []podReport
	decode(t, slices(t, "explain", "pod", "-l", "app=web", "-n", ns, "-o", "json").mustCode(t, 1), &all)
	if len(all) != 4 || compact(t, all[3].Services[0].Decision) != compact(t, rows["web-3"]) {
		t.Errorf("-l app=web: %d reports", len(all))
	}
	// The people's view names the same reason as explain svc's.
	text := slices(t, "explain", "svc/web", "-n", ns).Stdout
	pod := slices(t, "explain", "pod/web-3", "-n", ns).mustCode(t, 1).Stdout
	const reason = "NodeNotFound: node node-gone not found: pod skipped until it exists or the pod is deleted"
	if !strings.Contains(text, reason) || !strings.Contains(pod, reason) {
		t.Errorf("explain svc:\n%s\nexplain pod:\n%s", text, pod)
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return b.String()
}

// --ip names every publication of an address: our slice, the real
// kube-controller-manager's slice and Endpoints, and a stale slice whose
// Pod was deleted and whose address a new Pod now holds.
func TestExplainIP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	ns := newNamespace(t, cp)
	mustService(t, cp, service(ns, "web"))
	mustService(t, cp, service(ns, "old"))
	mustPods(t, cp, ns, podSpec("web", 0, 73), podSpec("old", 0, 74))
	// Synced before the controller starts: sync writes nothing for a
	// Service kube-controller-manager publishes correctly.
	kubectl(t, cp, "slices", "sync", "svc/web", "svc/old", "-n", ns).mustCode(t, 0)
	if err := cp.StartControllers(ctx, "endpointslice-controller", "endpoints-controller"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the controller's slices", func() bool {
		return len(listSlices(t, cp, ns, "web", controllerLabel)) == 1 && len(endpointAddresses(listSlices(t, cp, ns, "old", controllerLabel))) == 1
	})

	var rep ipReport
	decode(t, kubectl(t, cp, "slices", "explain", "--ip", "10.73.0.1", "-n", ns, "-o", "json").mustCode(t, 0), &rep)
	roles := map[string]bool{}
	for _, p := range rep.Publications {
		roles[p.Kind+"/"+p.Role] = p.Desired && !p.Stale && p.TargetRef == "web-0"
	}
	if rep.Schema != "kubectl-slices.explain-ip/v1" || len(rep.Holders) != 1 || rep.Holders[0].Name != "web-0" || !rep.InSync ||
		!roles["EndpointSlice/ours"] || !roles["EndpointSlice/controller"] || !roles["Endpoints/endpoints-controller"] || len(rep.Publications) != 3 {
		t.Errorf("--ip 10.73.0.1: %+v", rep)
	}

	// old-0 goes; new-0 gets its address; our slice of svc/old still
	// publishes it for old-0 (nothing synced since).
	zero := int64(0)
	if err := cp.Admin.CoreV1().Pods(ns).Delete(ctx, "old-0", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	fresh := podSpec("new", 0, 74)
	mustPods(t, cp, ns, fresh)
	waitFor(t, time.Minute, "the controller to drop old-0", func() bool {
		return len(endpointAddresses(listSlices(t, cp, ns, "old", controllerLabel))) == 0
	})
	r := kubectl(t, cp, "slices", "explain", "--ip", "10.74.0.1", "-n", ns).mustCode(t, 1)
	if !strings.Contains(r.Stdout, "STALE") || !strings.Contains(r.Stdout, "stale: targets pod old-0, but pod new-0 holds the address now") {
		t.Errorf("--ip 10.74.0.1:\n%s", r.Stdout)
	}
	decode(t, kubectl(t, cp, "slices", "explain", "--ip", "10.74.0.1", "-n", ns, "-o", "json").mustCode(t, 1), &rep)
	stale := 0
	for _, p := range rep.Publications {
		if p.Stale && p.Role == "ours" && p.Service == "old" && p.TargetRef == "old-0" && !p.Desired {
			stale++
		}
	}
	if stale != 1 || len(rep.Holders) != 1 || rep.Holders[0].Name != "new-0" {
		t.Errorf("--ip 10.74.0.1: %+v", rep)
	}
	kubectl(t, cp, "slices", "explain", "--ip", "10.99.0.1", "-A").mustCode(t, 3)
	sameAsLocal(t, cp, ns, "explain", "--ip", "10.73.0.1")
	sameAsLocal(t, cp, ns, "explain", "--ip", "10.74.0.1")
	sameAsLocal(t, cp, ns, "explain", "pod/web-0")
}

// A dual-stack Pod is found by either of its addresses.
func TestExplainIPDualStack(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web", func(s *corev1.Service) {
		policy := corev1.IPFamilyPolicyRequireDualStack
		s.Spec.IPFamilyPolicy = &policy
	}))
	p := podSpec("web", 0, 75)
	p.IPs = []string{"10.75.0.1", "fd00:75::1"}
	mustPods(t, shared, ns, p)
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	for addr, family := range map[string]string{"10.75.0.1": "IPv4", "fd00:75::1": "IPv6", "fd00:75:0::1": "IPv6"} {
		var rep ipReport
		decode(t, slices(t, "explain", "--ip", addr, "-n", ns, "-o", "json").mustCode(t, 0), &rep)
		if rep.Family != family || len(rep.Holders) != 1 || rep.Holders[0].Name != "web-0" || len(rep.Publications) != 1 ||
			rep.Publications[0].AddressType != family || !rep.Publications[0].Desired {
			t.Errorf("--ip %s: %+v", addr, rep)
		}
	}
	sameAsLocal(t, shared, ns, "explain", "--ip", "fd00:75::1")
}

// sameAsLocal runs a command on the cluster and on a dump of ns with
// --local -f: the JSON is byte-identical but for the source field.
func sameAsLocal(t *testing.T, cp *controlplane.ControlPlane, ns string, args ...string) {
	t.Helper()
	live := kubectl(t, cp, append(append([]string{"slices"}, args...), "-n", ns, "-o", "json")...)
	dir := t.TempDir()
	for _, kind := range []string{"services", "pods", "endpointslices", "endpoints"} {
		dump := kubectl(t, cp, "get", kind, "-n", ns, "-o", "yaml").mustCode(t, 0)
		if err := os.WriteFile(filepath.Join(dir, kind+".yaml"), []byte(dump.Stdout), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	nodes := kubectl(t, cp, "get", "nodes", "-o", "json").mustCode(t, 0)
	if err := os.WriteFile(filepath.Join(dir, "nodes.json"), []byte(nodes.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	local := kubectl(t, cp, append(append([]string{"slices"}, args...), "-n", ns, "-o", "json", "--local", "-f", dir)...)
	want := strings.Replace(live.Stdout, `"source": "cluster"`, `"source": "local"`, 1)
	if local.Code != live.Code || local.Stdout != want || !strings.Contains(live.Stdout, `"source": "cluster"`) {
		t.Errorf("%v: --local (exit %d) differs from the cluster's (exit %d):\n%s\n---\n%s%s", args, local.Code, live.Code, local.Stdout, live.Stdout, local.Stderr)
	}
}
