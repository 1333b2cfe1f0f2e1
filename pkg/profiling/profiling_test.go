package profiling

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func profile(t *testing.T, kind string) (string, bool) {
	t.Helper()
	out := filepath.Join(t.TempDir(), kind+".pprof")
	stop, err := Start(context.Background(), kind, out)
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
	if _, err := Start(context.Background(), "mutex", filepath.Join(t.TempDir(), "m")); err == nil {
		t.Errorf("mutex: accepted")
	}
}

// A heap profile is written when the context ends, before stop: a watch
// stopped by a signal drops its caches before stop runs.
func TestHeapAtContextEnd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "heap.pprof")
	ctx, cancel := context.WithCancel(context.Background())
	stop, err := Start(ctx, "heap", out)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, _ := os.ReadFile(out); len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heap profile written after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
