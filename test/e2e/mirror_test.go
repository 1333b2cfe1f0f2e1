package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

const mirroringManagedBy = "endpointslicemirroring-controller.k8s.io"

// TestLegacyControllers runs kube-controller-manager with only its
// EndpointSlice mirroring and Endpoints controllers. First, for random
// selectorless Services with hand-written Endpoints, our mirrored slices must
// carry what the mirroring controller writes. Then, with the controller
// stopped, sync --with-endpoints must write the Endpoints objects the
// Endpoints controller wrote for the fidelity scenarios, and never write over
// an Endpoints object written by someone else.
func TestLegacyControllers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cp := ownCluster(t, ctx)
	if err := cp.StartControllers(ctx, "endpointslice-mirroring-controller", "endpoints-controller"); err != nil {
		t.Fatal(err)
	}
	t.Run("mirroring", func(t *testing.T) { testMirroring(t, cp) })
	t.Run("endpoints", func(t *testing.T) { testLegacyEndpoints(t, cp) })
}

func testMirroring(t *testing.T, cp *controlplane.ControlPlane) {
	const n = 12
	for i := 0; i < n; i++ {
		t.Run(fmt.Sprintf("random-%d", i), func(t *testing.T) {
			ns := newNamespace(t, cp)
			r := rand.New(rand.NewSource(int64(100 + i)))
			svc, ep := randomMirrorObjects(r, ns, i)
			canonicalForOldMirroring(t, serverMinor(t, cp), ep)
			mustService(t, cp, svc)
			if _, err := cp.Admin.CoreV1().Endpoints(ns).Create(context.Background(), ep, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create endpoints: %v", err)
			}
			out := kubectl(t, cp, "slices", "sync", "svc/"+svc.Name, "-n", ns).mustCode(t, 0)
			ours := mirrorCanonical(listSlices(t, cp, ns, svc.Name, "kubectl-slices"))
			skip := ep.Labels[discovery.LabelSkipMirror] == "true"
			if skip != (ours == "") {
				t.Fatalf("skip-mirror=%v but our slices are:\n%s\nsync said:\n%s", skip, ours, out.Stdout)
			}
			theirs := awaitMirror(t, cp, ns, svc.Name, ours)
			if theirs != ours {
				t.Fatalf("kubectl-slices and the mirroring controller differ\n--- kubectl-slices\n%s--- kube-controller-manager\n%s", ours, theirs)
			}
			// A second sync of the same state writes nothing.
			before := sliceVersions(t, cp, ns, discovery.LabelManagedBy+"=kubectl-slices")
			kubectl(t, cp, "slices", "sync", "svc/"+svc.Name, "-n", ns).mustCode(t, 0)
			if after := sliceVersions(t, cp, ns, discovery.LabelManagedBy+"=kubectl-slices"); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("second sync rewrote slices: %v -> %v", before, after)
			}
			if !skip {
				ex := kubectl(t, cp, "slices", "explain", "svc/"+svc.Name, "-n", ns)
				if want := "mirrored from Endpoints " + ns + "/" + svc.Name + ": "; !strings.Contains(ex.Stdout, want) || ex.Code != 0 {
					t.Fatalf("explain (exit %d) does not say %q:\n%s%s", ex.Code, want, ex.Stdout, ex.Stderr)
				}
			}
			// Mirrored slices are live: prune leaves them.
			kubectl(t, cp, "slices", "prune", "-n", ns).mustCode(t, 0)
			if after := sliceVersions(t, cp, ns, discovery.LabelManagedBy+"=kubectl-slices"); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("prune touched mirrored slices: %v -> %v", before, after)
			}
			// The mirroring controller publishes the same: release hands ours back.
			if !skip {
				r := kubectl(t, cp, "slices", "release", "svc/"+svc.Name, "-n", ns).mustCode(t, 0)
				if left := listSlices(t, cp, ns, svc.Name, "kubectl-slices"); len(left) != 0 {
					t.Fatalf("release left %d mirrored slices of ours:\n%s%s", len(left), r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// awaitMirror waits up to 30 s for the mirroring controller's slices to
// equal ours (it works asynchronously; for skip-mirror, it waits 3 s for
// slices that should never come) and returns the last state seen.
func awaitMirror(t *testing.T, cp *controlplane.ControlPlane, ns, svc, ours string) string {
	t.Helper()
	if ours == "" {
		time.Sleep(3 * time.Second)
		return mirrorCanonical(listSlices(t, cp, ns, svc, mirroringManagedBy))
	}
	var theirs string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if theirs = mirrorCanonical(listSlices(t, cp, ns, svc, mirroringManagedBy)); theirs == ours {
			break
		}
	}
	return theirs
}

// mirrorCanonical is canonical plus each slice's annotations and owner.
func mirrorCanonical(slices []discovery.EndpointSlice) string {
	if len(slices) == 0 {
		return ""
	}
	var meta []string
	for _, s := range slices {
		var ann []string
		for k, v := range s.Annotations {
			ann = append(ann, k+"="+v)
		}
		sort.Strings(ann)
		owner := "none"
		if ref := metav1.GetControllerOf(&s); ref != nil {
			owner = ref.APIVersion + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
		}
		meta = append(meta, fmt.Sprintf("annotations %v owner %s prefix-ok %v", ann, owner, strings.HasPrefix(s.Name, s.Labels[discovery.LabelServiceName]+"-")))
	}
	sort.Strings(meta)
	return canonical(slices) + strings.Join(meta, "\n") + "\n"
}

// randomMirrorObjects builds a selectorless Service and a valid Endpoints
// object: one to three subsets, IPv4 and IPv6 addresses, named and unnamed
// ports, not-ready addresses, targets, hostnames and nodes, copied and
// excluded metadata. Case 0 has more than 1000 addresses in one subset,
// case 1 is labelled skip-mirror, case 2 has both families in each subset.
func randomMirrorObjects(r *rand.Rand, ns string, i int) (*corev1.Service, *corev1.Endpoints) {
	name := fmt.Sprintf("ext-%d", i)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Labels: map[string]string{"app": name}, Annotations: map[string]string{"team": "blue"}}}
	if r.Intn(2) == 0 {
		ep.Annotations[corev1.LastAppliedConfigAnnotation] = "{}"
		ep.Annotations[corev1.EndpointsLastChangeTriggerTime] = "2024-01-01T00:00:00Z"
	}
	if i == 1 {
		ep.Labels[discovery.LabelSkipMirror] = "true"
	}
	pool := []corev1.EndpointPort{
		{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
		{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP, AppProtocol: ptr("h2c")},
	}
	for s, n := 0, 1+r.Intn(3); s < n; s++ {
		var sub corev1.EndpointSubset
		if r.Intn(3) == 0 {
			sub.Ports = []corev1.EndpointPort{{Port: int32(7000 + s), Protocol: corev1.ProtocolTCP}} // unnamed
		} else {
			for _, j := range r.Perm(len(pool))[:1+r.Intn(len(pool))] {
				p := pool[j]
				if p.AppProtocol != nil {
					p.AppProtocol = ptr(*p.AppProtocol)
				}
				sub.Ports = append(sub.Ports, p)
			}
		}
		for a, m := 0, 1+r.Intn(6); a < m; a++ {
			addr := corev1.EndpointAddress{IP: fmt.Sprintf("10.50.%d.%d", s, 1+r.Intn(8))}
			if i == 2 || r.Intn(3) == 0 {
				addr.IP = fmt.Sprintf("fd00:50:%d::%x", s, 1+r.Intn(8))
			}
			if i == 2 && a == 0 {
				addr.IP = fmt.Sprintf("10.50.%d.99", s)
			}
			if r.Intn(2) == 0 {
				addr.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: fmt.Sprintf("pod-%d-%d", s, a)}
			}
			if r.Intn(3) == 0 {
				addr.Hostname = fmt.Sprintf("host-%d", a)
			}
			if r.Intn(2) == 0 {
				addr.NodeName = ptr(testNodes[r.Intn(len(testNodes))].Name)
			}
			if r.Intn(3) == 0 {
				sub.NotReadyAddresses = append(sub.NotReadyAddresses, addr)
			} else {
				sub.Addresses = append(sub.Addresses, addr)
			}
		}
		if i == 0 && s == 0 {
			for a := 0; a < 1150; a++ {
				addr := corev1.EndpointAddress{IP: fmt.Sprintf("10.60.%d.%d", a/250, a%250+1)}
				if a%4 == 0 {
					sub.NotReadyAddresses = append(sub.NotReadyAddresses, addr)
				} else {
					sub.Addresses = append(sub.Addresses, addr)
				}
			}
		}
		ep.Subsets = append(ep.Subsets, sub)
	}
	return svc, ep
}
