package e2e

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// An update that meets a slice deleted meanwhile (by hand, or by the garbage
// collector) is a conflict: sync re-reads, re-plans and succeeds.
func TestSyncReplansWhenSliceVanishesBeforeUpdate(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 43), podSpec("web", 1, 43), podSpec("web", 2, 43))
	slices(t, "sync", "svc/web", "-n", ns).mustCode(t, 0)
	if err := shared.SetPodReady(ctx, ns, "web-1", false); err != nil {
		t.Fatal(err)
	}
	// The first update of a slice finds it deleted a moment before.
	var once sync.Once
	deleted := ""
	kc := apiProxy(t, shared, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/namespaces/"+ns+"/endpointslices/") {
			once.Do(func() {
				deleted = r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
				if err := shared.Admin.DiscoveryV1().EndpointSlices(ns).Delete(ctx, deleted, metav1.DeleteOptions{}); err != nil {
					t.Error(err)
				}
			})
		}
		return false
	})
	r := slices(t, "sync", "svc/web", "-n", ns, "--kubeconfig", kc).mustCode(t, 0)
	if deleted == "" {
		t.Fatal("no update was sent: the race was not staged")
	}
	want := "10.43.0.1:true: 10.43.0.2:false: 10.43.0.3:true:"
	if got := endpointStateNoZone(t, shared, ns, "web"); got != want {
		t.Fatalf("end state %q, want %q\nstdout %s\nstderr %s", got, want, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "1 created") {
		t.Errorf("stdout %q: the re-plan's create is not reported", r.Stdout)
	}
}

// endpointStateNoZone is endpointState without zones.
func endpointStateNoZone(t testing.TB, cp *controlplane.ControlPlane, ns, svc string) string {
	var out []string
	for _, s := range listSlices(t, cp, ns, svc, oursLabel) {
		for _, e := range s.Endpoints {
			out = append(out, strings.Join(e.Addresses, ",")+":"+map[bool]string{true: "true", false: "false"}[e.Conditions.Ready != nil && *e.Conditions.Ready]+":")
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// A Service that fails part way lists every write that happened: three
// creates in flight together, the first refused, the two others done.
func TestSyncPartialFailureListsEveryWrite(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	var specs []controlplane.PodSpec
	for i := range 250 {
		specs = append(specs, podSpec("web", i, 44))
	}
	mustPods(t, shared, ns, specs...)
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	kc := apiProxy(t, shared, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/namespaces/"+ns+"/endpointslices") {
			return false
		}
		mu.Lock()
		arrived++
		first := arrived == 1
		if arrived == 3 {
			close(all)
		}
		mu.Unlock()
		<-all
		if first {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected refusal","reason":"Forbidden","code":403}`))
			return true
		}
		return false
	})
	r := slices(t, "sync", "svc/web", "-n", ns, "--write-concurrency=3", "--kubeconfig", kc).mustCode(t, 4)
	var live []string
	for _, s := range listSlices(t, shared, ns, "web", oursLabel) {
		live = append(live, s.Name)
	}
	if len(live) != 2 {
		t.Fatalf("%d slices exist, want the 2 not refused", len(live))
	}
	if !strings.Contains(r.Stderr, "2 writes happened before the failure") {
		t.Errorf("stderr does not count the writes:\n%s", r.Stderr)
	}
	for _, name := range live {
		if !strings.Contains(r.Stderr, "endpointslice/"+name+" created") {
			t.Errorf("write of %s not reported:\n%s", name, r.Stderr)
		}
	}
}
