package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// krew/.krew.yaml rendered by the release bot's rules for plugin.yaml's
// version gives plugin.yaml, byte for byte (checksums taken from it: test/krew
// checks them against the archives, and e2e against a host build). A
// template edited without make dist fails here.
func TestTemplateRendersManifest(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := read("plugin.yaml")
	var manifest struct {
		Spec struct {
			Version   string
			Platforms []struct {
				URI    string `json:"uri"`
				Sha256 string `json:"sha256"`
			}
		}
	}
	if err := yaml.Unmarshal([]byte(want), &manifest); err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, p := range manifest.Spec.Platforms {
		sums[p.URI] = p.Sha256
	}
	got, err := render(read("krew/.krew.yaml"), manifest.Spec.Version, func(uri string) (string, error) {
		if s, ok := sums[uri]; ok {
			return s, nil
		}
		return "", fmt.Errorf("template names %s, which plugin.yaml lacks", uri)
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("rendered template differs from plugin.yaml (run make dist) (-plugin.yaml +rendered):\n%s", diff)
	}
}
