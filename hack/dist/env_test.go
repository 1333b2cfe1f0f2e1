package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Settings that change the binary's bytes are fixed whatever the caller's
// environment says; the rest of it (PATH, the module cache) is kept.
func TestBuildEnvPinsCodeGeneration(t *testing.T) {
	caller := []string{"PATH=/usr/bin", "GOMODCACHE=/cache", "GOAMD64=v3", "GOARM64=v9.0", "GOFIPS140=latest",
		"CGO_ENABLED=1", "GOFLAGS=-tags=netgo", "GOOS=plan9"}
	effective := map[string]string{}
	for _, kv := range buildEnv(caller, "linux", "arm64") {
		k, v, _ := strings.Cut(kv, "=")
		effective[k] = v // the last one wins, as for exec.Cmd
	}
	want := map[string]string{"PATH": "/usr/bin", "GOMODCACHE": "/cache", "GOAMD64": "v1", "GOARM64": "v8.0", "GOFIPS140": "off",
		"CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly", "GOOS": "linux", "GOARCH": "arm64"}
	for k, v := range want {
		if effective[k] != v {
			t.Errorf("%s=%q, want %q", k, effective[k], v)
		}
	}
}

// The release builds leave out Go's "plugin" package, which kustomize's
// loader links unless its tag is set: a binary with it is twice the size
// and maps twice the pages (hack/build-tags).
func TestBuildTagsLeaveOutGoPlugins(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("..", "build-tags"))
	if err != nil {
		t.Fatal(err)
	}
	tags := buildTags(string(file))
	if tags == "" || strings.Contains(tags, "#") {
		t.Fatalf("tags %q", tags)
	}
	for _, tc := range []struct {
		tags       string
		wantPlugin bool
	}{{tags, false}, {"", true}} {
		cmd := exec.Command("go", "list", "-deps", "-tags", tc.tags, "./cmd/kubectl-slices")
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		got := slices.Contains(strings.Fields(string(out)), "plugin")
		if got != tc.wantPlugin {
			t.Errorf("with tags %q the binary links the plugin package: %v, want %v", tc.tags, got, tc.wantPlugin)
		}
	}
}
