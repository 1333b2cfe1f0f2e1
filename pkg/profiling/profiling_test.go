package profiling

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func profile(t *testing.T, kind string) (string, bool) {
	t.Helper()
	out := filepath.Join(t.TempDir(), kind+".pprof")
	stop, err := Start(kind, out)
	if err != nil {
		t.Fatal(kind, err)
	}
	for i := 0; i < 1000; i++ {
		_ = strings.Repeat("x", i)
	}
	stop()
	b, err := os.ReadFile(out)
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("%s: %v, %d bytes: not a gzipped profile", kind, err, len(b))
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(r)
	return string(data), true
}

func TestStart(t *testing.T) {
	if heap, ok := profile(t, "heap"); !ok || !strings.Contains(heap, "inuse_space") {
		t.Errorf("heap: written %v, not a heap profile", ok)
	}
	if cpu, ok := profile(t, "cpu"); !ok || !strings.Contains(cpu, "cpu") {
		t.Errorf("cpu: written %v, not a CPU profile", ok)
	}
	if _, ok := profile(t, "none"); ok {
		t.Errorf("none: a file was written")
	}
	if _, err := Start("mutex", filepath.Join(t.TempDir(), "m")); err == nil {
		t.Errorf("mutex: accepted")
	}
}
