package cluster

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
)

func TestReleaseMinor(t *testing.T) {
	for in, want := range map[string]int{
		"v1.32.13": 32, "v1.31.4+k3s1": 31, "v1.30.2-gke.1045000": 30, "v1.36.3": 36,
		"": 0, "v1.32": 0, "v2.1.0": 0, "devel": 0, "v0.0.0-master+$Format:%H$": 0,
	} {
		if got := ReleaseMinor(in); got != want {
			t.Errorf("ReleaseMinor(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestServerMinor(t *testing.T) {
	client := fake.NewSimpleClientset()
	client.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.32.13", Major: "1", Minor: "32"}
	if got := ServerMinor(context.Background(), client); got != 32 {
		t.Errorf("ServerMinor = %d, want 32", got)
	}
}
