package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// parseStatusKB reads a "Key: N kB" line of /proc/PID/status, in bytes.
func parseStatusKB(status, key string) (int64, bool) {
	for _, line := range strings.Split(status, "\n") {
		rest, ok := strings.CutPrefix(line, key+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// parseGauge reads an unlabelled gauge from Prometheus' text exposition.
func parseGauge(text, name string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// pluginPID finds the kubectl-slices process of a replica started as
// `kubectl slices ...`: kubectl execs the plugin in its own process (same
// PID) on Linux; should it ever run it as a child instead, the child whose
// executable is the plugin is taken. 0 when there is none (yet).
func pluginPID(kubectlPID int, plugin string) int {
	if exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(kubectlPID), "exe")); err == nil && filepath.Base(exe) == filepath.Base(plugin) {
		return kubectlPID
	}
	children, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(kubectlPID), "task", strconv.Itoa(kubectlPID), "children"))
	for _, c := range strings.Fields(string(children)) {
		pid, err := strconv.Atoi(c)
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", c, "exe")); err == nil && filepath.Base(exe) == filepath.Base(plugin) {
			return pid
		}
	}
	return 0
}

// memory is a process's resident set size and its two parts, in bytes, 0
// when unreadable: anonymous memory (the heap, stacks: what a leak grows)
// and file pages (the binary's code and data as it touches them, at most
// its size, shared and reclaimable).
type memory struct{ RSS, Anon, File int64 }

func memoryOf(pid int) memory {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return memory{}
	}
	var m memory
	m.RSS, _ = parseStatusKB(string(b), "VmRSS")
	m.Anon, _ = parseStatusKB(string(b), "RssAnon")
	m.File, _ = parseStatusKB(string(b), "RssFile")
	return m
}

// fdsOf counts a process's open file descriptors, -1 when unreadable.
func fdsOf(pid int) int {
	d, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
	if err != nil {
		return -1
	}
	return len(d)
}

// runtimeOf reads go_goroutines and go_gc_heap_live_bytes (the heap the
// last GC found live: what RSS grows from, without the garbage the heap
// may grow to before the next GC) from a replica's /metrics, -1 each when
// it does not answer within 3 s or lacks it.
func runtimeOf(ctx context.Context, addr string) (goroutines int, heapLive int64) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1, -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return -1, -1
	}
	goroutines, heapLive = -1, -1
	if v, ok := parseGauge(string(b), "go_goroutines"); ok {
		goroutines = int(v)
	}
	if v, ok := parseGauge(string(b), "go_gc_heap_live_bytes"); ok {
		heapLive = int64(v)
	}
	return goroutines, heapLive
}
