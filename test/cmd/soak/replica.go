package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/faultproxy"
)

// exitLeaseLost is the loop's exit code once it lost the Lease: by design,
// so that its restart stands by again.
const exitLeaseLost = 4

// replica is one `kubectl slices sync --watch --standby ...` under a
// supervisor that restarts it when it exits, as a kubelet restarts a
// container: after 10 s, doubling to 5 min, the delay reset once it ran
// 10 min.
type replica struct {
	Name, User string
	proxy      *faultproxy.Proxy
	healthAddr string
	kubectl    string
	plugin     string
	args, env  []string
	logPath    string

	mu       sync.Mutex
	cmd      *exec.Cmd
	pid      int // kubectl's, which execs the plugin
	started  time.Time
	exits    []replicaExit
	delay    time.Duration // the last restart's
	stopping bool
	done     chan struct{}
}

// replicaExit is one end of a replica's process.
type replicaExit struct {
	At   time.Time
	PID  int
	Code int // -1: killed by a signal
	// Lost: exit 4, the Lease lost (by design); Stopped: at the soak's end.
	Lost, Stopped bool
}

// Crash: neither the Lease lost nor the soak's stop.
func (e replicaExit) Crash() bool { return !e.Lost && !e.Stopped }

func (r *replica) start() error {
	log, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.kubectl, r.args...)
	cmd.Env = r.env
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, killed with the soak even when the soak is
	// killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(log, "--- %s: kubectl %v\n", time.Now().UTC().Format(time.RFC3339Nano), r.args)
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	r.mu.Lock()
	r.cmd, r.pid, r.started = cmd, cmd.Process.Pid, time.Now()
	r.mu.Unlock()
	go func() {
		err := cmd.Wait()
		log.Close()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		r.exited(cmd.Process.Pid, code)
	}()
	return nil
}

// begin starts the replica; it is restarted whenever it exits, until stop.
func (r *replica) begin() error {
	r.done = make(chan struct{})
	if err := r.start(); err != nil {
		close(r.done)
		return err
	}
	return nil
}

// exited records an exit and schedules the restart.
func (r *replica) exited(pid, code int) {
	r.mu.Lock()
	e := replicaExit{At: time.Now(), PID: pid, Code: code, Stopped: r.stopping, Lost: code == exitLeaseLost && !r.stopping}
	r.exits = append(r.exits, e)
	r.delay = nextDelay(r.delay, e.At.Sub(r.started))
	delay, stopping := r.delay, r.stopping
	r.cmd, r.pid = nil, 0
	r.mu.Unlock()
	if stopping {
		close(r.done)
		return
	}
	go func() {
		time.Sleep(delay)
		r.mu.Lock()
		stopping := r.stopping
		r.mu.Unlock()
		if stopping {
			close(r.done)
			return
		}
		if err := r.start(); err != nil {
			r.mu.Lock()
			r.exits = append(r.exits, replicaExit{At: time.Now(), Code: -1})
			r.mu.Unlock()
			close(r.done)
		}
	}()
}

// nextDelay is the kubelet's restart delay: 10 s, doubled at each restart
// of a process that ran under 10 min, at most 5 min.
func nextDelay(prev, ran time.Duration) time.Duration {
	switch {
	case prev == 0 || ran >= 10*time.Minute:
		return 10 * time.Second
	case prev*2 > 5*time.Minute:
		return 5 * time.Minute
	}
	return prev * 2
}

// PID is the plugin's process id now, 0 when it is not running.
func (r *replica) PID() int {
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	if pid == 0 {
		return 0
	}
	return pluginPID(pid, r.plugin)
}

// Exits are the process's ends so far.
func (r *replica) Exits() []replicaExit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]replicaExit(nil), r.exits...)
}

// stop sends SIGTERM to the running process's group (a Deployment's
// rollout would), SIGKILL after 15 s, and waits for the supervisor.
func (r *replica) stop() {
	r.mu.Lock()
	r.stopping = true
	cmd := r.cmd
	r.mu.Unlock()
	if cmd != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	}
	select {
	case <-r.done:
		return
	case <-time.After(15 * time.Second):
	}
	r.mu.Lock()
	cmd = r.cmd
	r.mu.Unlock()
	if cmd != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-r.done:
	case <-time.After(5 * time.Second):
	}
}

// get asks the replica's health server, 0 when it does not answer.
func (r *replica) get(ctx context.Context, path string) int {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.healthAddr+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// sample looks at the replica's process once.
func (r *replica) sample(ctx context.Context) resourceSample {
	s := resourceSample{At: time.Now(), Replica: r.Name, Goroutines: -1, FDs: -1, HeapLive: -1}
	pid := r.PID()
	if pid == 0 {
		return s
	}
	m := memoryOf(pid)
	s.PID, s.RSS, s.RSSAnon, s.RSSFile, s.FDs = pid, m.RSS, m.Anon, m.File, fdsOf(pid)
	s.Goroutines, s.HeapLive = runtimeOf(ctx, r.healthAddr)
	return s
}
