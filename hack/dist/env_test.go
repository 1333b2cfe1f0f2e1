package main

import (
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
