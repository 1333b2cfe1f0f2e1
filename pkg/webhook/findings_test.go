package webhook

import (
	"fmt"
	"strings"
	"testing"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

func pod(name string, lbl map[string]string, ip string, owner string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: lbl},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Ports: ports}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}}
	if owner != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner, Controller: &yes}}
	}
	return p
}

func svc(sel map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: ports, ClusterIP: "10.0.0.1",
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}}}
}

func sport(name string, port int32, target intstr.IntOrString) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: target, Protocol: corev1.ProtocolTCP}
}

var httpPort = corev1.ContainerPort{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}

// matching plays the cache: the Pods the selector matches.
func matching(s *corev1.Service, all []*corev1.Pod) Facts {
	var f Facts
	for _, p := range all {
		ok := true
		for k, v := range s.Spec.Selector {
			ok = ok && p.Labels[k] == v
		}
		if ok {
			f.Pods = append(f.Pods, p)
		}
	}
	if len(f.Pods) == 0 {
		f.NamespacePods = all
	}
	return f
}

func kinds(fs []Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f.Kind))
	}
	return strings.Join(s, ",")
}

func TestServiceFindings(t *testing.T) {
	web := map[string]string{"app": "web"}
	pods := []*corev1.Pod{
		pod("web-0", web, "10.1.0.1", "web-rs", httpPort),
		pod("web-1", web, "10.1.0.2", "web-rs", httpPort),
		pod("other-0", map[string]string{"app": "other"}, "10.1.0.9", "other-rs"),
	}
	noHTTP := []*corev1.Pod{pods[0], pod("web-2", web, "10.1.0.3", "web-rs"), pod("web-3", web, "10.1.0.4", "web-rs")}
	mixed := []*corev1.Pod{pods[0], pod("worker-0", web, "10.1.0.5", "worker-rs", corev1.ContainerPort{ContainerPort: 9090, Protocol: corev1.ProtocolTCP})}
	v6 := svc(web, sport("http", 80, intstr.FromString("http")))
	v6.Spec.IPFamilies, v6.Spec.ClusterIP = []corev1.IPFamily{corev1.IPv6Protocol}, "fd00::1"
	cases := []struct {
		name  string
		svc   *corev1.Service
		pods  []*corev1.Pod
		facts *Facts
		kinds string
		want  []string
	}{
		{name: "correct", svc: svc(web, sport("http", 80, intstr.FromString("http"))), pods: pods},
		{name: "typo with near miss", svc: svc(map[string]string{"app": "Web"}, sport("http", 80, intstr.FromString("http"))), pods: pods,
			kinds: "NoPods", want: []string{"selector app=Web matches no Pods in namespace ns", "nearest miss: pod web-0 has app=web", "(the selector wants app=Web), among others"}},
		{name: "no Pods at all", svc: svc(map[string]string{"app": "none"}), pods: nil, kinds: "NoPods"},
		{name: "named port missing", svc: svc(web, sport("http", 80, intstr.FromString("http"))), pods: noHTTP,
			kinds: "PortNotFound", want: []string{`targetPort "http" of port http is not declared by 2 of 3 Pods (web-2, web-3)`}},
		{name: "owners with different ports", svc: svc(web, sport("http", 80, intstr.FromInt32(8080))), pods: mixed,
			kinds: "MixedOwners", want: []string{"2 owners", "ReplicaSet/web-rs declares port 8080, ReplicaSet/worker-rs does not"}},
		{name: "owners with the same port", svc: svc(web, sport("http", 80, intstr.FromInt32(8080))), pods: pods},
		{name: "IPv6 over IPv4 Pods", svc: v6, pods: pods, kinds: "AddressFamily", want: []string{"2 of 2 selected Pods get no endpoint (web-0, web-1)", "IPv6"}},
		{name: "IPv6 over mixed Pods of one owner", svc: v6, pods: []*corev1.Pod{pods[0], pod("web-v6", web, "fd00::5", "web-rs", httpPort)},
			kinds: "AddressFamily", want: []string{"1 of 2 selected Pods get no endpoint (web-0)"}},
		{name: "selectorless without endpoints", svc: svc(nil, sport("", 80, intstr.FromInt32(80))), facts: &Facts{}, kinds: "NoEndpoints"},
		{name: "selectorless with endpoints", svc: svc(nil, sport("", 80, intstr.FromInt32(80))), facts: &Facts{HasEndpoints: true}},
		{name: "namespace not cached", svc: svc(map[string]string{"app": "Web"}), facts: &Facts{Unknown: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := matching(c.svc, c.pods)
			if c.facts != nil {
				f = *c.facts
			}
			before := c.svc.DeepCopy()
			got, err := ServiceFindings(c.svc, f, reconcile.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if kinds(got) != c.kinds {
				t.Fatalf("kinds %q, want %q: %+v", kinds(got), c.kinds, got)
			}
			for _, w := range c.want {
				if !strings.Contains(got[0].Message, w) {
					t.Errorf("message %q lacks %q", got[0].Message, w)
				}
			}
			for _, f := range got {
				checkHidden(t, f, c.svc, c.pods)
			}
			if c.svc.String() != before.String() {
				t.Error("the Service was modified")
			}
		})
	}
}

// checkHidden: a finding with Pod data says so to a writer who may not
// list Pods, and names none of the Pods, their owners, labels, addresses
// or declared ports; one without reads the same to everyone.
func checkHidden(t *testing.T, f Finding, s *corev1.Service, pods []*corev1.Pod) {
	t.Helper()
	if f.Kind == NoEndpoints || (f.Kind == NoPods && !strings.Contains(f.Message, "nearest miss")) {
		if f.HasPodData() || f.Text(false) != f.Message {
			t.Errorf("%s has no Pod data but reads differently: %q", f.Kind, f.Text(false))
		}
		return
	}
	h := f.Text(false)
	if !f.HasPodData() || h == f.Message || !strings.HasSuffix(h, "(details hidden: you may not list pods in ns)") {
		t.Errorf("%s without the right to list Pods: %q", f.Kind, h)
	}
	if f.Text(true) != f.Message {
		t.Errorf("%s with the right to list Pods: %q", f.Kind, f.Text(true))
	}
	var secret []string
	for _, p := range pods {
		secret = append(secret, p.Name, p.Status.PodIP, "app="+p.Labels["app"], "has ")
		for _, o := range p.OwnerReferences {
			secret = append(secret, o.Name)
		}
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				own := false // the Service's own target port is no secret
				for _, sp := range s.Spec.Ports {
					own = own || sp.TargetPort.IntVal == cp.ContainerPort
				}
				if !own {
					secret = append(secret, fmt.Sprint(cp.ContainerPort))
				}
			}
		}
	}
	for _, x := range secret {
		if x != "" && strings.Contains(h, x) && !strings.Contains(f.Message[:strings.Index(f.Message, ":")+1], x) {
			t.Errorf("%s hidden text %q names %q", f.Kind, h, x)
		}
	}
}

func TestDecide(t *testing.T) {
	fs := []Finding{{Kind: NoPods, Message: "a"}, {Kind: PortNotFound, Message: "b"}, {Kind: MixedOwners, Message: "c"}, {Kind: AddressFamily, Message: strings.Repeat("x", 1000)}}
	v := Decide(fs, nil, true)
	if !v.Allowed || v.Message != "" {
		t.Fatalf("denied by default: %+v", v)
	}
	if len(v.Warnings) != maxWarnings || v.Warnings[0] != warnPrefix+"a" {
		t.Fatalf("warnings %q", v.Warnings)
	}
	v = Decide([]Finding{{Kind: AddressFamily, Message: strings.Repeat("é", 500)}}, nil, true)
	if len(v.Warnings[0]) > maxWarningLen || !strings.HasSuffix(v.Warnings[0], " more bytes)") {
		t.Fatalf("long warning not shortened: %d bytes", len(v.Warnings[0]))
	}
	// One that fits the bound is never cut.
	fits := strings.Repeat("x", maxWarningLen-len(warnPrefix))
	if v = Decide([]Finding{{Kind: AddressFamily, Message: fits}}, nil, true); v.Warnings[0] != warnPrefix+fits {
		t.Fatalf("a warning that fits was cut: %q", v.Warnings[0])
	}
	// The API server drops a warning it cannot put in a Warning header.
	v = Decide([]Finding{{Kind: AddressFamily, Message: "a\nb\x1b[2J\xff"}}, nil, true)
	if _, err := utilnet.NewWarningHeader(299, "-", v.Warnings[0]); err != nil || v.Warnings[0] != warnPrefix+"a b?[2J?" {
		t.Fatalf("warning %q: %v", v.Warnings[0], err)
	}
	v = Decide(fs, map[Kind]bool{PortNotFound: true}, true)
	if v.Allowed || !strings.Contains(v.Message, "b (denied by --deny-on PortNotFound)") || strings.Contains(v.Message, "a") {
		t.Fatalf("deny-on: %+v", v)
	}
	if len(v.Warnings) != 3 || v.Warnings[1] != warnPrefix+"c" {
		t.Fatalf("the other findings stay warnings: %q", v.Warnings)
	}
	// Without the right to list Pods, warnings and denials alike are
	// worded without Pod data.
	fs[1].Hidden, fs[2].Hidden = "b hidden", "c hidden"
	v = Decide(fs, map[Kind]bool{PortNotFound: true}, false)
	if v.Allowed || v.Message != "b hidden (denied by --deny-on PortNotFound)" {
		t.Fatalf("hidden deny-on: %+v", v)
	}
	if want := []string{warnPrefix + "a", warnPrefix + "c hidden"}; strings.Join(v.Warnings[:2], "|") != strings.Join(want, "|") {
		t.Fatalf("hidden warnings %q, want %q", v.Warnings, want)
	}
}

// record is what the cache stores of p (cluster.Transform of a copy).
func record(p *corev1.Pod) *cluster.PodRecord {
	r, _ := cluster.Transform(p.DeepCopy())
	return r.(*cluster.PodRecord)
}
