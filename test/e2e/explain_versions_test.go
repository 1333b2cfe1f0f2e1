package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A Service on which kube-controller-manager before v1.33 publishes other
// endpoints than kubectl-slices: explain notes each difference when the API
// server is such a release (here a proxy answering /version as one), and
// none on the current one.
func TestExplainVersionNotes(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web", func(s *corev1.Service) {
		s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		s.Spec.PublishNotReadyAddresses = true // a Pod whose Node is gone is still published
		s.Spec.TrafficDistribution = ptr(corev1.ServiceTrafficDistributionPreferClose)
	}))
	written := podSpec("web", 0, 62) // an IPv6 address not in canonical form
	written.IPs = []string{"fd00:62:0:0:0:0:0:1"}
	sidecar := podSpec("web", 1, 62) // the named port only on a sidecar
	sidecar.IPs, sidecar.Ports, sidecar.SidecarPorts = []string{"fd00:62::2"}, nil, sidecar.Ports
	gone := podSpec("web", 2, 62) // no Node, so no zone
	gone.IPs, gone.Node = []string{"fd00:62::3"}, "node-gone"
	mustPods(t, shared, ns, written, sidecar, gone)
	want := map[string]string{"AddressNotCanonical": "web-0", "SidecarPort": "web-1", "ZonelessHint": "web-2"}

	var gitVersion atomic.Value
	kc := apiProxy(t, shared, func(w http.ResponseWriter, r *http.Request) bool {
		v, _ := gitVersion.Load().(string)
		if r.URL.Path != "/version" || v == "" {
			return false
		}
		var major, minor int
		_, _ = fmt.Sscanf(v, "v%d.%d", &major, &minor) // "devel": 0.0
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"major":"%d","minor":"%d","gitVersion":%q,"platform":"linux/amd64"}`, major, minor, v)
		return true
	})

	minor := serverMinor(t, shared)
	for _, tc := range []struct {
		gitVersion, release string
		notes               bool
	}{
		{"", fmt.Sprintf("v1.%d", minor), minor < 33}, // the server's own
		{"v1.32.13", "v1.32", true},
		{"v1.31.14", "v1.31", true},
		{"v1.33.0", "v1.33", false},
		{"devel", "", false}, // unknown: nothing said
	} {
		gitVersion.Store(tc.gitVersion)
		r := slices(t, "explain", "svc/web", "-n", ns, "--kubeconfig", kc, "-o", "json").mustCode(t, 1)
		var report struct {
			ClusterRelease string `json:"clusterRelease"`
			VersionNotes   []struct {
				Difference string   `json:"difference"`
				Since      string   `json:"since"`
				Pods       []string `json:"pods"`
				Message    string   `json:"message"`
			} `json:"versionNotes"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
			t.Fatalf("%s: -o json: %v\n%s", tc.gitVersion, err, r.Stdout)
		}
		if !strings.Contains(r.Stdout, `"versionNotes": [`) || report.ClusterRelease != tc.release {
			t.Errorf("%q: clusterRelease %q, want %q; versionNotes must be a list:\n%s", tc.gitVersion, report.ClusterRelease, tc.release, r.Stdout)
		}
		got := map[string]string{}
		for _, n := range report.VersionNotes {
			got[n.Difference] = strings.Join(n.Pods, ",")
		}
		if !tc.notes {
			if len(got) != 0 {
				t.Errorf("%q: want no notes, got %+v", tc.gitVersion, report.VersionNotes)
			}
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: notes %v, want %v", tc.gitVersion, got, want)
		}
		human := slices(t, "explain", "svc/web", "-n", ns, "--kubeconfig", kc).mustCode(t, 1).Stdout
		section := strings.Index(human, "Cluster release "+tc.release+": kube-controller-manager differs here:")
		if section < 0 || section > strings.Index(human, "Diagnosis:") {
			t.Errorf("%q: no release section before the diagnosis:\n%s", tc.gitVersion, human)
			continue
		}
		for _, k := range []string{"AddressNotCanonical", "SidecarPort", "ZonelessHint"} {
			if !strings.Contains(human[section:], "  "+k+" (until v1.33): ") {
				t.Errorf("%q: no %s line:\n%s", tc.gitVersion, k, human[section:])
			}
		}
		t.Logf("%s:\n%s", tc.gitVersion, human[section:])
	}
}
