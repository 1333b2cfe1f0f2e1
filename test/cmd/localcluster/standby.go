package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// The standby act's timing: --takeover-after is the flag's default; the
// hand-back hold is shortened from its 30 s default so the act stays short.
const (
	takeoverAfter = 5 * time.Second
	handbackHold  = 5 * time.Second
)

// Managed-by values of the two writers.
const (
	ours       = "kubectl-slices"
	controller = "endpointslice-controller.k8s.io"
)

// Ready endpoints of svc/web by phase: seeded Pods 1-4 ready, 5 not ready,
// 6 terminating; then web-7d9f-5 turns ready, then web-7d9f-1 stops being.
var (
	readySeeded          = []string{"10.244.1.11", "10.244.1.14", "10.244.2.12", "10.244.3.13"}
	readyAfterFirstFlip  = []string{"10.244.1.11", "10.244.1.14", "10.244.2.12", "10.244.2.15", "10.244.3.13"}
	readyAfterSecondFlip = []string{"10.244.1.14", "10.244.2.12", "10.244.2.15", "10.244.3.13"}
)

// standbyAct shows the safety net: the loop in standby beside a real
// kube-controller-manager writes nothing while the controller keeps up,
// takes svc/web over once the controller is killed and the Service changes,
// and hands it back when the controller returns. Every step has a bound;
// missing one is an error. The loop is stopped on every return path.
func standbyAct(ctx context.Context, cp *controlplane.ControlPlane, env []string) error {
	say("The safety net: kube-controller-manager comes up (only its EndpointSlice controller) and publishes svc/web.")
	if err := cp.StartControllerManager(ctx); err != nil {
		return err
	}
	if err := waitFor(ctx, "kube-controller-manager to publish svc/web's ready endpoints", 60*time.Second,
		publishes(ctx, cp, controller, readySeeded)); err != nil {
		return err
	}
	loop, err := startLoop(ctx, cp, env)
	if err != nil {
		return err
	}
	defer loop.stop()
	if err := loop.waitLine(ctx, "caches filled", 60*time.Second); err != nil {
		return err
	}
	if err := healthyPhase(ctx, cp, env); err != nil {
		return err
	}
	if err := outagePhase(ctx, cp, env, loop); err != nil {
		return err
	}
	if err := returnPhase(ctx, cp, env, loop); err != nil {
		return err
	}
	return loop.stop()
}

// healthyPhase: a Pod turns ready, the controller publishes it, and ours
// stay at zero for longer than --takeover-after.
func healthyPhase(ctx context.Context, cp *controlplane.ControlPlane, env []string) error {
	say("web-7d9f-5 turns ready: the controller publishes it, the loop writes nothing.")
	if err := cp.SetPodReady(ctx, "demo", "web-7d9f-5", true); err != nil {
		return err
	}
	if err := waitFor(ctx, "the controller's slice to list web-7d9f-5 as ready", 30*time.Second,
		publishes(ctx, cp, controller, readyAfterFirstFlip)); err != nil {
		return err
	}
	quiet := takeoverAfter + 2*time.Second
	fmt.Printf("... checking for %s (longer than --takeover-after) that the loop writes no slice\n", quiet)
	if err := holdFor(ctx, quiet, func() error {
		if n, _, err := slices(ctx, cp, ours); err != nil || n != 0 {
			return fmt.Errorf("the standby loop wrote %d slices while the controller was healthy (err %v)", n, err)
		}
		return nil
	}); err != nil {
		return err
	}
	return show(ctx, env, "Only the controller's slice: kubectl-slices has 0.")
}

// outagePhase: the controller is killed, a Pod stops being ready, and the
// loop takes over within --takeover-after and a margin.
func outagePhase(ctx context.Context, cp *controlplane.ControlPlane, env []string, loop *loop) error {
	say(fmt.Sprintf("kube-controller-manager is killed (SIGKILL, pid %d); then web-7d9f-1 stops being ready.", cp.ControllerManagerPID()))
	cp.KillControllerManager()
	if err := cp.SetPodReady(ctx, "demo", "web-7d9f-1", false); err != nil {
		return err
	}
	if err := loop.waitLine(ctx, "taking over from kube-controller-manager", takeoverAfter+15*time.Second); err != nil {
		return err
	}
	if err := waitFor(ctx, "our slice to publish the desired endpoints", 10*time.Second,
		publishes(ctx, cp, ours, readyAfterSecondFlip)); err != nil {
		return err
	}
	return show(ctx, env, "The controller's slice is stale (10.244.1.11, web-7d9f-1, still ready); ours publishes what it would.")
}

// returnPhase: the controller starts again, catches up, and the loop
// deletes ours after --handback-hold.
func returnPhase(ctx context.Context, cp *controlplane.ControlPlane, env []string, loop *loop) error {
	say("kube-controller-manager comes back: once its slice has stayed current for --handback-hold, the loop hands back.")
	if err := cp.StartControllerManager(ctx); err != nil {
		return err
	}
	if err := loop.waitLine(ctx, "handed back to kube-controller-manager", handbackHold+45*time.Second); err != nil {
		return err
	}
	if err := waitFor(ctx, "our slices to be gone and the controller's to be current", 10*time.Second, func() (bool, error) {
		n, _, err := slices(ctx, cp, ours)
		if err != nil || n != 0 {
			return false, err
		}
		return publishes(ctx, cp, controller, readyAfterSecondFlip)()
	}); err != nil {
		return err
	}
	return show(ctx, env, "Only the controller's slice again, current.")
}

// publishes reports whether manager's slices of svc/web list exactly the
// ready addresses want.
func publishes(ctx context.Context, cp *controlplane.ControlPlane, manager string, want []string) func() (bool, error) {
	return func() (bool, error) {
		_, ready, err := slices(ctx, cp, manager)
		return strings.Join(ready, ",") == strings.Join(want, ","), err
	}
}

// slices counts manager's slices of svc/web and lists their ready
// addresses, sorted.
func slices(ctx context.Context, cp *controlplane.ControlPlane, manager string) (int, []string, error) {
	list, err := cp.Admin.DiscoveryV1().EndpointSlices("demo").List(ctx, metav1.ListOptions{
		LabelSelector: discovery.LabelServiceName + "=web," + discovery.LabelManagedBy + "=" + manager})
	if err != nil {
		return 0, nil, err
	}
	var ready []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				ready = append(ready, e.Addresses...)
			}
		}
	}
	sort.Strings(ready)
	return len(list.Items), ready, nil
}

// listSlices lists the slices of namespace demo with their manager and
// ready addresses.
const listSlices = `kubectl get endpointslices -n demo -o custom-columns='NAME:.metadata.name,MANAGED-BY:.metadata.labels.endpointslice\.kubernetes\.io/managed-by,READY:.endpoints[?(@.conditions.ready==true)].addresses[0]'`

// show says what to see and lists the slices through kubectl.
func show(ctx context.Context, env []string, what string) error {
	fmt.Printf("# %s\n", what)
	return step(ctx, env, listSlices)
}

func say(s string) { fmt.Printf("\n# %s\n", s) }

// waitFor polls cond every 200 ms for at most bound, saying what it waits
// for and how long it took.
func waitFor(ctx context.Context, what string, bound time.Duration, cond func() (bool, error)) error {
	fmt.Printf("... waiting up to %s for %s\n", bound, what)
	start := time.Now()
	for {
		ok, err := cond()
		if ok && err == nil {
			fmt.Printf("... %s: done after %s\n", what, time.Since(start).Round(100*time.Millisecond))
			return nil
		}
		if time.Since(start) > bound {
			return fmt.Errorf("waited %s for %s (last error: %v)", bound, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// holdFor checks every 200 ms for d that check passes.
func holdFor(ctx context.Context, d time.Duration, check func() error) error {
	for end := time.Now().Add(d); time.Now().Before(end); {
		if err := check(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return check()
}

// loop is the plugin's sync --watch --standby, run through kubectl, its
// output printed as it comes and kept for waitLine.
type loop struct {
	cmd     *exec.Cmd
	out     *lines
	done    chan error
	stopped bool
}

// startLoop runs the loop in its own process group, killed with this
// process if it dies, so that nothing outlives the act.
func startLoop(ctx context.Context, cp *controlplane.ControlPlane, env []string) (*loop, error) {
	args := []string{"slices", "sync", "--watch", "--standby", "--all", "-n", "demo",
		"--handback-hold=" + handbackHold.String(), "--summary-interval=0"}
	fmt.Printf("# The loop, as kubectl slices deploy runs it in the cluster (--takeover-after=%s, its default;\n# --handback-hold=%s, shortened from 30s for the demo):\n", takeoverAfter, handbackHold)
	fmt.Printf("$ kubectl %s &\n", strings.Join(args, " "))
	l := &loop{cmd: exec.Command(cp.Kubectl(), args...), out: &lines{}, done: make(chan error, 1)}
	l.cmd.Env = env
	l.cmd.Stdout, l.cmd.Stderr = l.out, l.out
	l.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := l.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { l.done <- l.cmd.Wait() }()
	return l, nil
}

// waitLine waits at most bound for a line of the loop's output holding s;
// the loop exiting first is an error.
func (l *loop) waitLine(ctx context.Context, s string, bound time.Duration) error {
	fmt.Printf("... waiting up to %s for the loop to print %q\n", bound, s)
	start := time.Now()
	for {
		if l.out.has(s) {
			fmt.Printf("... seen after %s\n", time.Since(start).Round(100*time.Millisecond))
			return nil
		}
		if time.Since(start) > bound {
			return fmt.Errorf("the loop did not print %q within %s", s, bound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-l.done:
			l.done <- err
			return fmt.Errorf("the loop exited (%v) before printing %q", err, s)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM to the loop's process group, as a Deployment's
// rollout would, and SIGKILL after 10 s; a second call does nothing.
func (l *loop) stop() error {
	if l.stopped {
		return nil
	}
	l.stopped = true
	pgid := -l.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case err := <-l.done:
		if err != nil {
			return fmt.Errorf("the loop: %w", err)
		}
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-l.done
		return fmt.Errorf("the loop did not stop within 10s of SIGTERM: killed")
	}
	fmt.Println("(loop stopped by SIGTERM, exit code 0)")
	return nil
}

// lines is an io.Writer that prints whole lines to stdout and keeps them.
type lines struct {
	mu      sync.Mutex
	partial []byte
	kept    []string
}

func (w *lines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := strings.IndexByte(string(w.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		fmt.Fprintln(os.Stdout, line)
		w.kept = append(w.kept, line)
	}
}

func (w *lines) has(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.kept {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}
