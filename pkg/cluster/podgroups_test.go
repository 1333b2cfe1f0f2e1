package cluster

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-slices/kubectl-slices/internal/testutil"
)

func groupPod(ns, name string, lbl map[string]string, port int32) *corev1.Pod {
	return testutil.NewPod(ns, name).Labels(lbl).OwnedBy("ReplicaSet", "rs").ContainerPort("http", port, corev1.ProtocolTCP).IP("10.0.0.1").Build()
}

// groupsString lists the groups as "pod pod|pod", each sorted, for
// comparing with what the Pods' labels say by hand.
func groupsString(t *testing.T, store cache.Indexer, ns string, sel map[string]string) string {
	t.Helper()
	gs, err := (&Cache{Pods: store}).PodGroups(ns, sel)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range gs {
		if g.First.Namespace != ns {
			t.Errorf("pod %s/%s listed for namespace %s", g.First.Namespace, g.First.Name, ns)
		}
		names := append([]string(nil), g.Names...)
		sort.Strings(names)
		if g.First.Name != names[0] {
			t.Errorf("group %v: first %s", names, g.First.Name)
		}
		out = append(out, strings.Join(names, " "))
	}
	sort.Strings(out)
	return strings.Join(out, "|")
}

func TestPodGroups(t *testing.T) {
	web := map[string]string{"app": "web", "tier": "front"}
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, PodIndexers())
	for _, p := range []*corev1.Pod{
		groupPod("a", "web-0", web, 8080),
		groupPod("a", "web-1", map[string]string{"tier": "front", "app": "web"}, 8080),
		groupPod("a", "web-2", web, 9090), // another shape
		groupPod("a", "web-3", map[string]string{"app": "web", "tier": "back"}, 8080),
		groupPod("a", "db-0", map[string]string{"app": "db"}, 5432),
		groupPod("a", "bare-0", nil, 8080),
		groupPod("ab", "web-9", web, 8080), // a namespace whose name extends "a"
		groupPod("", "web-8", web, 8080),
	} {
		if err := store.Add(record(p)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		ns   string
		sel  map[string]string
		want string
	}{
		{"a", map[string]string{"app": "web"}, "web-0 web-1|web-2|web-3"},
		{"a", map[string]string{"app": "web", "tier": "front"}, "web-0 web-1|web-2"},
		{"a", map[string]string{"tier": "front", "app": "web", "x": "y"}, ""},
		{"a", map[string]string{"app": "Web"}, ""},
		{"a", map[string]string{"app": "db"}, "db-0"},
		{"a", map[string]string{}, "bare-0|db-0|web-0 web-1|web-2|web-3"},
		{"a", nil, "bare-0|db-0|web-0 web-1|web-2|web-3"},
		{"ab", nil, "web-9"},
		{"b", nil, ""},
	}
	for _, c := range cases {
		if got := groupsString(t, store, c.ns, c.sel); got != c.want {
			t.Errorf("PodGroups(%q, %v) = %q, want %q", c.ns, c.sel, got, c.want)
		}
	}

	// The index follows the store: a relabelled Pod moves, a deleted one
	// goes, and the Pods listed are the stored ones.
	moved := record(groupPod("a", "web-1", map[string]string{"app": "web", "tier": "back"}, 8080))
	if err := store.Update(moved); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(record(groupPod("a", "web-2", web, 9090))); err != nil {
		t.Fatal(err)
	}
	if got, want := groupsString(t, store, "a", map[string]string{"app": "web"}), "web-0|web-1 web-3"; got != want {
		t.Errorf("after the update and the delete: %q, want %q", got, want)
	}
	gs, _ := (&Cache{Pods: store}).PodGroups("a", map[string]string{"tier": "back"})
	if len(gs) != 1 || !reflect.DeepEqual(gs[0].First, moved.Pod()) {
		t.Errorf("PodGroups did not return the stored web-1: %+v", gs)
	}
}

func TestPodGroupKeyShape(t *testing.T) {
	web := map[string]string{"app": "web"}
	base := groupPod("a", "web-0", web, 8080)
	if PodGroupKey(base) != PodGroupKey(groupPod("a", "web-1", map[string]string{"app": "web"}, 8080)) {
		t.Error("two Pods alike in all but name have different keys")
	}
	for what, change := range map[string]func(p *corev1.Pod){
		"phase":     func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
		"no IP":     func(p *corev1.Pod) { p.Status.PodIP, p.Status.PodIPs = "", nil },
		"family":    func(p *corev1.Pod) { p.Status.PodIPs = []corev1.PodIP{{IP: "fd00::1"}} },
		"port":      func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8081 },
		"port name": func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].Name = "web" },
		"owner":     func(p *corev1.Pod) { p.OwnerReferences[0].Name = "rs2" },
		"sidecar port": func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "s", Ports: []corev1.ContainerPort{{ContainerPort: 1}}}}
		},
		"label":     func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web", "v": "2"} },
		"namespace": func(p *corev1.Pod) { p.Namespace = "b" },
	} {
		p := base.DeepCopy()
		change(p)
		if PodGroupKey(p) == PodGroupKey(base) {
			t.Errorf("a Pod differing in %s has the same key", what)
		}
	}
}

// A store without the index must say so rather than list no Pods.
func TestPodGroupsWithoutIndex(t *testing.T) {
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIndexers())
	_ = store.Add(record(groupPod("a", "web-0", nil, 80)))
	if _, err := (&Cache{Pods: store}).PodGroups("a", nil); err == nil {
		t.Fatal("no error without the index")
	}
}
