package upstreamdiff

import (
	"fmt"
	"math/rand"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-slices/kubectl-slices/pkg/mirror"
)

// randomMirrorInput builds a selectorless Service and an Endpoints object
// with overlapping subsets, both families, named and unnamed ports, invalid
// and sloppy IPs, duplicates across ready and not ready, reserved and
// excluded metadata, skip-mirror and, now and then, more than 1000
// addresses in one subset.
func randomMirrorInput(r *rand.Rand, i int) (*corev1.Service, *corev1.Endpoints) {
	name := fmt.Sprintf("svc-%d", i)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("svc-uid-" + name)},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("ep-uid-" + name),
		Labels: map[string]string{}, Annotations: map[string]string{}}}
	pick := func(p float64) bool { return r.Float64() < p }
	if pick(0.5) {
		ep.Labels["app"] = "web"
	}
	if pick(0.1) {
		ep.Labels[discovery.LabelSkipMirror] = "true"
	}
	if pick(0.1) {
		ep.Labels[discovery.LabelSkipMirror] = "false"
	}
	if pick(0.1) {
		ep.Labels[discovery.LabelServiceName] = "other"
	}
	if pick(0.3) {
		ep.Annotations["team"] = "blue"
	}
	if pick(0.3) {
		ep.Annotations[corev1.LastAppliedConfigAnnotation] = "{}"
	}
	if pick(0.3) {
		ep.Annotations[corev1.EndpointsLastChangeTriggerTime] = "2024-01-01T00:00:00Z"
	}
	if pick(0.05) {
		ep.Annotations[mirror.LeaderElectionAnnotation] = "{}"
	}
	portPool := []corev1.EndpointPort{
		{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
		{Name: "grpc", Port: 9090, Protocol: corev1.ProtocolTCP, AppProtocol: ptr("h2c")},
		{Name: "metrics", Port: 9100, Protocol: corev1.ProtocolSCTP},
	}
	big := pick(0.08)
	usedAppProtocol := false
	for s, n := 0, 1+r.Intn(4); s < n; s++ {
		var sub corev1.EndpointSubset
		switch k := r.Intn(5); {
		case k == 0: // no ports
		case k == 1: // one unnamed port
			sub.Ports = []corev1.EndpointPort{{Port: int32(8000 + r.Intn(3)), Protocol: corev1.ProtocolTCP}}
		default:
			for _, j := range r.Perm(len(portPool))[:1+r.Intn(3)] {
				p := portPool[j]
				if p.AppProtocol != nil {
					// A port with appProtocol in two subsets is two ports
					// to upstream (its map key holds the pointer), and which
					// subset's readiness wins then follows its hash order:
					// once per object keeps the reference deterministic.
					if usedAppProtocol {
						continue
					}
					usedAppProtocol = true
					p.AppProtocol = ptr(*p.AppProtocol)
				}
				sub.Ports = append(sub.Ports, p)
			}
		}
		for a, m := 0, r.Intn(8); a < m; a++ {
			addr := randomAddress(r)
			if pick(0.7) {
				sub.Addresses = append(sub.Addresses, addr)
			} else {
				sub.NotReadyAddresses = append(sub.NotReadyAddresses, addr)
			}
		}
		if big && s == 0 {
			for a := 0; a < 1100+r.Intn(200); a++ {
				addr := corev1.EndpointAddress{IP: fmt.Sprintf("10.9.%d.%d", a/250, a%250+1)}
				if a%3 == 0 {
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

func randomAddress(r *rand.Rand) corev1.EndpointAddress {
	ips := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.10", "fd00::1", "fd00::2", "FD00::0003", "010.0.0.4", "::ffff:10.0.0.5", "not-an-ip"}
	a := corev1.EndpointAddress{IP: ips[r.Intn(len(ips))]}
	if r.Intn(2) == 0 {
		n := r.Intn(3)
		a.TargetRef = &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: fmt.Sprintf("pod-%d", n), UID: types.UID(fmt.Sprintf("uid-%d", r.Intn(4)))}
	}
	if r.Intn(3) == 0 {
		a.Hostname = fmt.Sprintf("host-%d", r.Intn(2))
	}
	if r.Intn(2) == 0 {
		a.NodeName = ptr(fmt.Sprintf("node-%d", r.Intn(3)))
	}
	return a
}

func ptr[T any](v T) *T { return &v }
