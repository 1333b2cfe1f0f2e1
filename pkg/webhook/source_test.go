package webhook

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// TestCacheSourceAgrees: the findings from the cache's Pod index (groups
// matched once per label set) are exactly those from the selected Pods one
// by one, Pod names and counts included.
func TestCacheSourceAgrees(t *testing.T) {
	web := map[string]string{"app": "web"}
	canary := map[string]string{"app": "web", "track": "canary"}
	var many []*corev1.Pod
	for i := range 7 {
		many = append(many, pod(fmt.Sprintf("web-%d", 9-i), web, fmt.Sprintf("10.1.0.%d", i+1), "web-rs"))
	}
	many = append(many,
		pod("canary-0", canary, "10.1.1.1", "web-rs", httpPort),
		pod("canary-1", canary, "10.1.1.2", "web-rs"),
		pod("other-0", map[string]string{"app": "other"}, "10.1.2.1", "other-rs"),
		pod("lone-0", map[string]string{"app": "lone"}, "10.1.2.2", "lone-rs"),
		pod("batch-1", map[string]string{"app": "batch"}, "10.1.3.2", "batch-rs"),
		pod("batch-0", map[string]string{"app": "batch"}, "10.1.3.1", "batch-rs"))
	elsewhere := pod("web-0", web, "10.9.0.1", "web-rs")
	elsewhere.Namespace = "ns2"
	many = append(many, elsewhere)
	v6 := svc(web, sport("http", 80, intstr.FromString("http")))
	v6.Spec.IPFamilies, v6.Spec.ClusterIP = []corev1.IPFamily{corev1.IPv6Protocol}, "fd00::1"
	services := map[string]*corev1.Service{
		"named port missing in most": svc(web, sport("http", 80, intstr.FromString("http"))),
		"canary only":                svc(canary, sport("http", 80, intstr.FromString("http"))),
		"numeric port":               svc(web, sport("http", 80, intstr.FromInt32(8080))),
		"typo of a group":            svc(map[string]string{"app": "Web"}, sport("http", 80, intstr.FromString("http"))),
		"typo of one Pod":            svc(map[string]string{"app": "Lone"}, sport("http", 80, intstr.FromString("http"))),
		"one near miss":              svc(map[string]string{"app": "lone", "tier": "x"}),
		"one group near":             svc(map[string]string{"app": "batch", "tier": "x"}),
		"nothing near":               svc(map[string]string{"tier": "x"}, sport("http", 80, intstr.FromString("http"))),
		"IPv6 over IPv4":             v6,
	}
	// Twice: the groups read from the store, and from the memo the
	// informer's notifications keep.
	for _, memo := range []bool{false, true} {
		t.Run(fmt.Sprint("memo=", memo), func(t *testing.T) { cacheSourceAgrees(t, many, services, memo) })
	}
}

func cacheSourceAgrees(t *testing.T, many []*corev1.Pod, services map[string]*corev1.Service, memo bool) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cluster.PodIndexers())
	c := &cluster.Cache{Pods: store}
	var track cache.ResourceEventHandler
	if memo {
		track = c.TrackPodGroups()
	}
	var inNS []*corev1.Pod
	for _, p := range many {
		r := record(p)
		if err := store.Add(r); err != nil {
			t.Fatal(err)
		}
		if track != nil {
			track.OnAdd(r, false)
		}
		if p.Namespace == "ns" {
			inNS = append(inNS, p)
		}
	}
	src := CacheSource{Cache: c}
	sawNames := false
	for name, s := range services {
		t.Run(name, func(t *testing.T) {
			want, err := ServiceFindings(s, matching(s, inNS), reconcile.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			got, err := ServiceFindings(s, src.Facts(s), reconcile.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := ServiceFindings(s, src.Facts(s), reconcile.DefaultOptions()); !reflect.DeepEqual(again, got) {
				t.Fatalf("asked again: %+v, first %+v", again, got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("from the index:\n%+v\none by one:\n%+v", got, want)
			}
			t.Logf("%+v", got)
			if name == "one group near" && (len(got) != 1 || !strings.HasSuffix(got[0].Message, "pod batch-0 has no tier label (the selector wants tier=x), among others")) {
				t.Errorf("two near misses in one group: %+v", got)
			}
			if name == "named port missing in most" {
				sawNames = len(got) == 1 && got[0].Message == `service web: targetPort "http" of port http is not declared by 8 of 9 Pods (canary-1, web-3, web-4 and 5 more): they receive no traffic on it`
			}
		})
	}
	if !sawNames {
		t.Error("the PortNotFound message does not name the first Pods by name")
	}
}

// A store without the index must not read as "no Pods".
func TestCacheSourceWithoutIndex(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = store.Add(record(pod("web-0", map[string]string{"app": "web"}, "10.1.0.1", "web-rs")))
	f := CacheSource{Cache: &cluster.Cache{Pods: store}}.Facts(svc(map[string]string{"app": "web"}))
	if !f.Unknown {
		t.Fatalf("facts %+v, want Unknown", f)
	}
}
