package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// check finds each planted problem, one Service each, and nothing on the
// healthy Service; a healthy namespace exits 0.
func TestCheckFindsPlantedProblems(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	for i, name := range []string{"noslices", "stale", "both", "gone", "big", "fine"} {
		mustService(t, shared, service(ns, name))
		n := 2
		if name == "big" {
			n = 101
		}
		specs := make([]controlplane.PodSpec, 0, n)
		for j := 0; j < n; j++ {
			specs = append(specs, podSpec(name, j, 30+i))
		}
		mustPods(t, shared, ns, specs...)
	}
	for _, name := range []string{"both", "gone", "fine"} {
		slices(t, "sync", "svc/"+name, "-n", ns).mustCode(t, 0)
	}
	// Ours in one slice of 101 endpoints, above the default maximum of 100.
	slices(t, "sync", "svc/big", "-n", ns, "--max-endpoints-per-slice", "1000").mustCode(t, 0)
	// Published by the controller (as far as its label says) with an endpoint no Pod has.
	slices(t, "sync", "svc/stale", "-n", ns).mustCode(t, 0)
	st := listSlices(t, shared, ns, "stale", oursLabel)[0]
	copySlice(t, shared, st, "stale-kcm", controllerLabel, func(s *discovery.EndpointSlice) {
		e := s.Endpoints[0].DeepCopy()
		e.Addresses, e.TargetRef = []string{"10.99.99.99"}, nil
		s.Endpoints = append(s.Endpoints, *e)
	})
	if err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Delete(ctx, st.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	both := listSlices(t, shared, ns, "both", oursLabel)[0]
	copySlice(t, shared, both, "both-kcm", controllerLabel, nil)
	if err := shared.Admin.CoreV1().Services(ns).Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	r := slices(t, "check", "-n", ns, "-o", "json").mustCode(t, 1)
	var report struct {
		Schema   string
		Services int
		Healthy  bool
		Findings []struct{ Namespace, Service, Kind, Message, Command string }
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	var got []string
	for _, f := range report.Findings {
		got = append(got, f.Service+" "+f.Kind)
		if f.Command == "" || f.Message == "" {
			t.Errorf("finding without message or command: %+v", f)
		}
	}
	sort.Strings(got)
	want := []string{"big OverLimit", "both HandBack", "gone Orphaned", "noslices NoSlices", "stale Stale"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("findings %v, want %v\n%s", got, want, r.Stdout)
	}
	if report.Schema != "kubectl-slices.check/v1" || report.Services != 5 || report.Healthy {
		t.Errorf("report header: %+v", report)
	}

	// -A sees them too (and whatever other tests left), as a table.
	r = slices(t, "check", "-A").mustCode(t, 1)
	for _, w := range want {
		svc, kind, _ := strings.Cut(w, " ")
		if !strings.Contains(r.Stdout, fmt.Sprintf("%s  ", ns)) || !containsLine(r.Stdout, ns, svc, kind) {
			t.Errorf("check -A lacks %s/%s %s", ns, svc, kind)
		}
	}

	// A healthy namespace.
	healthy := newNamespace(t, shared)
	mustService(t, shared, service(healthy, "web"))
	mustPods(t, shared, healthy, podSpec("web", 0, 39))
	slices(t, "sync", "svc/web", "-n", healthy).mustCode(t, 0)
	r = slices(t, "check", "-n", healthy).mustCode(t, 0)
	if !strings.Contains(r.Stdout, "no findings") {
		t.Errorf("healthy check: %s", r.Stdout)
	}
}

func containsLine(out string, fields ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(fields) && f[0] == fields[0] && f[1] == fields[1] && f[2] == fields[2] {
			return true
		}
	}
	return false
}
