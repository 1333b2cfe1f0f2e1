package explain

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/pkg/endpoints"
)

// A controller-written Endpoints object is reported when an address is
// missing, extra or listed with the other readiness than its Pod; not when
// it agrees, and never when it is not the controller's.
func TestControllerEndpointsFinding(t *testing.T) {
	in, _ := setup() // web-1 10.0.0.1 and web-2 10.0.0.2, both ready
	port := []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}
	obj := func(managedBy string, ready []string, notReady ...string) *corev1.Endpoints {
		sub := corev1.EndpointSubset{Ports: port}
		for _, ip := range ready {
			sub.Addresses = append(sub.Addresses, corev1.EndpointAddress{IP: ip})
		}
		for _, ip := range notReady {
			sub.NotReadyAddresses = append(sub.NotReadyAddresses, corev1.EndpointAddress{IP: ip})
		}
		return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{endpoints.LabelManagedBy: managedBy}},
			Subsets: []corev1.EndpointSubset{sub}}
	}
	for _, tc := range []struct {
		name string
		live *corev1.Endpoints
		want []string // substrings; nil for no finding
	}{
		{"agrees", obj(endpoints.ControllerManagedBy, []string{"10.0.0.1", "10.0.0.2"}), nil},
		{"stuck not ready", obj(endpoints.ControllerManagedBy, []string{"10.0.0.1"}, "10.0.0.2"),
			[]string{"in 1 address: 10.0.0.2 is listed not ready, its Pod is ready"}},
		{"missing and extra", obj(endpoints.ControllerManagedBy, []string{"10.0.0.1", "10.0.0.9"}),
			[]string{"in 2 addresses", "10.0.0.2 (ready) is missing", "10.0.0.9 is listed ready but no Pod calls for it"}},
		{"someone else's", obj("someone", []string{"10.0.0.1"}, "10.0.0.2"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := endpoints.Compute(endpoints.Input{Service: in.Service, Pods: in.Pods, Live: tc.live}, endpoints.Options{ManagedBy: endpoints.ControllerManagedBy})
			if err != nil {
				t.Fatal(err)
			}
			f := ControllerEndpointsFinding(plan)
			if tc.want == nil {
				if f != nil {
					t.Fatalf("finding %q", f.Message)
				}
				return
			}
			if f == nil || f.Kind != EndpointsDrift {
				t.Fatalf("no finding for %s", tc.name)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.Message, w) {
					t.Errorf("message %q lacks %q", f.Message, w)
				}
			}
		})
	}
}

// explain's report carries the drift of the controller's Endpoints object.
func TestBuildReportsEndpointsDrift(t *testing.T) {
	in, plan := setup()
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Labels: map[string]string{endpoints.LabelManagedBy: endpoints.ControllerManagedBy}},
		Subsets: []corev1.EndpointSubset{{NotReadyAddresses: []corev1.EndpointAddress{{IP: "10.0.0.1"}, {IP: "10.0.0.2"}},
			Ports: []corev1.EndpointPort{{Name: "http", Port: 8080, Protocol: corev1.ProtocolTCP}}}}}
	r := Build(in, plan, Options{ManagedBy: ours, Endpoints: ep})
	if !strings.Contains(r.EndpointsDrift, "in 2 addresses: 10.0.0.1 is listed not ready, its Pod is ready") {
		t.Fatalf("endpointsDrift %q", r.EndpointsDrift)
	}
	if r := Build(in, plan, Options{ManagedBy: ours}); r.EndpointsDrift != "" {
		t.Fatalf("without the object: %q", r.EndpointsDrift)
	}
}
