package completion

import (
	"reflect"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestServices(t *testing.T) {
	names := []string{"api", "web", "worker"}
	cases := []struct {
		given  []string
		prefix string
		want   []string
	}{
		{nil, "", []string{"svc/api", "svc/web", "svc/worker"}},
		{nil, "svc/", []string{"svc/api", "svc/web", "svc/worker"}},
		{nil, "svc/w", []string{"svc/web", "svc/worker"}},
		{nil, "service/a", []string{"service/api"}},
		{nil, "w", []string{"web", "worker"}},
		{nil, "deploy/", nil},
		{[]string{"svc/web"}, "svc/", []string{"svc/api", "svc/worker"}},
		{[]string{"svc"}, "", []string{"api", "web", "worker"}},
		{[]string{"svc", "api"}, "w", []string{"web", "worker"}},
	}
	for _, c := range cases {
		if got := Services(names, c.given, c.prefix); !reflect.DeepEqual(got, c.want) {
			t.Errorf("given %v prefix %q: %v, want %v", c.given, c.prefix, got, c.want)
		}
	}
}

func TestOneServiceNamed(t *testing.T) {
	for _, c := range []struct {
		given []string
		want  bool
	}{{nil, false}, {[]string{"svc"}, false}, {[]string{"svc/web"}, true}, {[]string{"web"}, true}, {[]string{"svc", "web"}, true}, {[]string{"deploy/web"}, false}} {
		if got := OneServiceNamed(c.given); got != c.want {
			t.Errorf("%v: %v, want %v", c.given, got, c.want)
		}
	}
}

func TestWorkloads(t *testing.T) {
	listed := map[string][]string{"deployment": {"api", "web"}, "statefulset": {"db"}}
	var asked []string
	names := func(resource string) []string { asked = append(asked, resource); return listed[resource] }
	cases := []struct {
		prefix string
		want   []string
		ok     bool
	}{
		{"", nil, false},
		{"dep", nil, false},
		{"deploy/", []string{"deploy/api", "deploy/web"}, true},
		{"deploy/w", []string{"deploy/web"}, true},
		{"sts/", []string{"sts/db"}, true},
		{"pod/", nil, true},
	}
	for _, c := range cases {
		got, ok := Workloads(c.prefix, names)
		if !reflect.DeepEqual(got, c.want) || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.prefix, got, ok, c.want, c.ok)
		}
	}
	if want := []string{"deployment", "deployment", "statefulset"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("listed %v, want %v (nothing for no kind or an unknown kind)", asked, want)
	}
}

func TestKubeconfigNames(t *testing.T) {
	cfg := clientcmdapi.Config{
		Contexts:  map[string]*clientcmdapi.Context{"prod": {}, "dev": {}},
		Clusters:  map[string]*clientcmdapi.Cluster{"b": {}, "a": {}},
		AuthInfos: map[string]*clientcmdapi.AuthInfo{"admin": {}},
	}
	want := Kubeconfig{Contexts: []string{"dev", "prod"}, Clusters: []string{"a", "b"}, Users: []string{"admin"}}
	if got := KubeconfigNames(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func TestPods(t *testing.T) {
	names := []string{"web-0", "web-1", "api-0"}
	for _, c := range []struct {
		given  []string
		prefix string
		want   string
	}{
		{nil, "pod/w", "pod/web-0 pod/web-1"},
		{nil, "po/a", "po/api-0"},
		{[]string{"pod/web-0"}, "pod/", "pod/web-1 pod/api-0"},
		{[]string{"pod"}, "w", "web-0 web-1"},
	} {
		if got := strings.Join(Pods(names, c.given, c.prefix), " "); got != c.want {
			t.Errorf("Pods(%v, %q) = %q, want %q", c.given, c.prefix, got, c.want)
		}
	}
	if !PodPrefix(nil, "pod/") || !PodPrefix([]string{"pods/a"}, "") || PodPrefix(nil, "svc/") || PodPrefix(nil, "web") {
		t.Error("PodPrefix")
	}
}

func TestNodes(t *testing.T) {
	names := []string{"node-a", "node-b", "worker-1"}
	for _, c := range []struct{ prefix, want string }{
		{"", "node-a node-b worker-1"},
		{"no", "node-a node-b"},
		{"node-a,", "node-a,node-b node-a,worker-1"},
		{"node-a,w", "node-a,worker-1"},
		{"node-a,node-b,", "node-a,node-b,worker-1"},
	} {
		if got := strings.Join(Nodes(names, c.prefix), " "); got != c.want {
			t.Errorf("Nodes(%q) = %q, want %q", c.prefix, got, c.want)
		}
	}
}
