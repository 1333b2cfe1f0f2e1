package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// A server that pages forever, and one that answers GET services/web with a
// Pod: explain stops with one line saying so (exit 4) instead of paging
// without end or misreading the object.
func TestExplainHostileServer(t *testing.T) {
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustPods(t, shared, ns, podSpec("web", 0, 43))
	var podLists atomic.Int64
	var mode atomic.Value
	kc := apiProxy(t, shared, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/namespaces/"+ns+"/") {
			return false
		}
		switch {
		case mode.Load() == "paging" && strings.HasSuffix(r.URL.Path, "/pods"):
			podLists.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"again"},"items":[]}`)
			return true
		case mode.Load() == "wrong kind" && strings.HasSuffix(r.URL.Path, "/services/web"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":%q}}`, ns)
			return true
		}
		return false
	})
	mode.Store("paging")
	r := slices(t, "explain", "svc/web", "-n", ns, "--kubeconfig", kc).mustCode(t, 4)
	if !strings.Contains(r.Stderr, "repeated a continue token") || strings.Count(r.Stderr, "\n") != 1 || podLists.Load() > 3 {
		t.Fatalf("%d pod lists; stderr %q", podLists.Load(), r.Stderr)
	}
	t.Logf("endless paging: %d pod lists, %q", podLists.Load(), r.Stderr)
	mode.Store("wrong kind")
	r = slices(t, "explain", "svc/web", "-n", ns, "--kubeconfig", kc).mustCode(t, 4)
	if !strings.Contains(r.Stderr, "wrong kind of object for GET services/web") || strings.Count(r.Stderr, "\n") != 1 {
		t.Fatalf("stderr %q", r.Stderr)
	}
	t.Logf("wrong kind: %q", r.Stderr)
}
