package cmd

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --profile=heap writes a heap profile (gzipped protobuf, as pprof reads);
// a kind kubectl knows but we do not write is refused before the command
// runs.
func TestProfileHeap(t *testing.T) {
	out := filepath.Join(t.TempDir(), "heap.pprof")
	if _, stderr, code := runCmd(t, "version", "--client", "--profile=heap", "--profile-output="+out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b || !strings.Contains(gunzip(t, b), "inuse_space") {
		t.Errorf("%s is not a heap profile (%d bytes)", out, len(b))
	}

	_, stderr, code := runCmd(t, "version", "--client", "--profile=mutex")
	if code != 2 || !strings.Contains(stderr, "--profile must be none, cpu or heap") {
		t.Errorf("--profile=mutex: exit %d, %s", code, stderr)
	}
}

// A command that fails still writes its profile: the runs a profile is
// wanted for are often the ones that end badly (explain --ip of an
// address nobody holds exits 3).
func TestProfileWrittenOnFailure(t *testing.T) {
	out := filepath.Join(t.TempDir(), "heap.pprof")
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	if _, stderr, code := runCmd(t, "explain", "svc/web", "--local", "-f", missing, "--profile=heap", "--profile-output="+out); code == 0 {
		t.Fatalf("explain of a missing file: exit 0: %s", stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || !strings.Contains(gunzip(t, b), "inuse_space") {
		t.Errorf("%s is not a heap profile (%d bytes)", out, len(b))
	}
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
