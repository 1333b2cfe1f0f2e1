package main

import (
	"os"
	"testing"
	"time"
)

func TestParseProc(t *testing.T) {
	status := "Name:\tkubectl-slices\nVmPeak:\t  900000 kB\nVmRSS:\t   41236 kB\nRssAnon:\t   12100 kB\nThreads:\t12\n"
	if v, ok := parseStatusKB(status, "VmRSS"); !ok || v != 41236<<10 {
		t.Errorf("VmRSS: %d %v", v, ok)
	}
	if v, ok := parseStatusKB(status, "RssAnon"); !ok || v != 12100<<10 {
		t.Errorf("RssAnon: %d %v", v, ok)
	}
	if _, ok := parseStatusKB("Name:\tzombie\n", "VmRSS"); ok {
		t.Error("no VmRSS line (a zombie) parsed")
	}
	metrics := "# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines 87\n" +
		"go_gc_heap_live_bytes_total 1\ngo_gc_heap_live_bytes 6.5e+06\ngo_threads 12\n"
	if n, ok := parseGauge(metrics, "go_goroutines"); !ok || n != 87 {
		t.Errorf("go_goroutines: %v %v", n, ok)
	}
	if n, ok := parseGauge(metrics, "go_gc_heap_live_bytes"); !ok || n != 6.5e6 {
		t.Errorf("go_gc_heap_live_bytes: %v %v", n, ok)
	}
	// This test binary is its own "plugin"; a process that is not is none.
	exe, _ := os.Executable()
	if pid := pluginPID(os.Getpid(), exe); pid != os.Getpid() {
		t.Errorf("pluginPID(self) = %d", pid)
	}
	if pid := pluginPID(os.Getpid(), "/nowhere/kubectl-slices"); pid != 0 {
		t.Errorf("pluginPID of another binary = %d", pid)
	}
	if m := memoryOf(os.Getpid()); m.RSS <= 0 || m.Anon <= 0 || m.File <= 0 || m.Anon+m.File > m.RSS+(1<<20) || fdsOf(os.Getpid()) <= 0 {
		t.Error("own RSS or fds unreadable")
	}
}

// A kubelet's restart delay: 10 s, doubled while the process keeps dying
// young, at most 5 min, back to 10 s after a long run.
func TestNextDelay(t *testing.T) {
	d := time.Duration(0)
	var got []time.Duration
	for i := 0; i < 7; i++ {
		d = nextDelay(d, time.Minute)
		got = append(got, d)
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if d := nextDelay(5*time.Minute, 11*time.Minute); d != 10*time.Second {
		t.Errorf("after a long run: %s", d)
	}
}
