// Command localcluster runs the test control plane for a person: `make demo`
// uses it to show kubectl-slices repairing a Service that has no endpoints,
// and `make demo ACT=standby` the safety net beside kube-controller-manager.
//
//	localcluster [-demo] [-act repair|standby] [-plugin-dir DIR] [-exit]
//
// It starts etcd and kube-apiserver on loopback, seeds a namespace with three
// Nodes in two zones, six Pods and a Service, and with -demo runs an act
// through a real kubectl. The repair act (the default) runs kubectl get,
// kubectl slices explain and sync, and sync --watch while two Pods change
// readiness. The standby act starts kube-controller-manager (only its
// EndpointSlice controller) and sync --watch --standby beside it, shows the
// loop writing nothing, kills the controller, shows the loop taking over,
// restarts the controller and shows the hand-back; each step is bounded and
// a missed one ends the act with an error. Then it prints how to use the
// cluster, and stops everything on Ctrl-C (at once with -exit).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-slices/kubectl-slices/test/controlplane"
)

// options are the command's flags.
type options struct {
	demo      bool
	act       string
	pluginDir string
	exit      bool
	// dir is the control plane's directory; empty means a temporary one.
	dir string
}

func main() {
	var o options
	flag.BoolVar(&o.demo, "demo", false, "run an act after seeding")
	flag.StringVar(&o.act, "act", "repair", "with -demo, the act: repair (explain, sync, sync --watch) or standby (the safety net beside kube-controller-manager)")
	flag.StringVar(&o.pluginDir, "plugin-dir", "bin", "directory holding the kubectl-slices binary")
	flag.BoolVar(&o.exit, "exit", false, "stop right after the demo instead of waiting for Ctrl-C")
	flag.StringVar(&o.dir, "cp-dir", "", "directory for the control plane's data and logs (default: a temporary one, removed at exit)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	interrupted := ctx.Err() != nil
	stop()
	switch {
	case interrupted && !o.exit && err == nil:
		// Ctrl-C is how a person ends the demo's cluster.
	case interrupted:
		fmt.Fprintln(os.Stderr, "interrupted: every process the demo started is stopped")
		os.Exit(130)
	case err != nil:
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	acts := map[string]func(context.Context, *controlplane.ControlPlane, []string) error{"repair": repairAct, "standby": standbyAct}
	act, ok := acts[o.act]
	if !ok {
		return fmt.Errorf("-act %q: want repair or standby", o.act)
	}
	start := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{Dir: o.dir})
	if err != nil {
		return err
	}
	defer cp.Stop()
	fmt.Printf("Local control plane ready in %s at %s (etcd + kube-apiserver, no kube-controller-manager)\n\n", time.Since(start).Round(100*time.Millisecond), cp.URL)
	if err := seed(ctx, cp); err != nil {
		return err
	}
	abs, err := filepath.Abs(o.pluginDir)
	if err != nil {
		return err
	}
	path := abs + string(os.PathListSeparator) + cp.BinDir + string(os.PathListSeparator) + os.Getenv("PATH")
	env := append(os.Environ(), "KUBECONFIG="+cp.Kubeconfig, "PATH="+path)
	if o.demo {
		actStart := time.Now()
		if err := act(ctx, cp, env); err != nil {
			return fmt.Errorf("%s act: %w", o.act, err)
		}
		fmt.Printf("The %s act took %s.\n\n", o.act, time.Since(actStart).Round(100*time.Millisecond))
	}
	if o.exit {
		return nil
	}
	fmt.Printf("To use this cluster from another shell:\n  export KUBECONFIG=%s\n  export PATH=%s:%s:$PATH\n  kubectl slices explain svc/web -n demo\n\n",
		cp.Kubeconfig, abs, cp.BinDir)
	fmt.Println("Press Ctrl-C to stop the control plane.")
	<-ctx.Done()
	fmt.Println("\nStopping.")
	return nil
}

// repairAct shows a Service with no slices explained and repaired, then
// sync --watch keeping the slices current.
func repairAct(ctx context.Context, cp *controlplane.ControlPlane, env []string) error {
	for _, s := range []struct{ say, cmd string }{
		{"The Service has ready Pods, but no EndpointSlices: nothing routes to it.", "kubectl get pods,endpointslices -n demo -o wide"},
		{"kubectl slices explains why.", "kubectl slices explain svc/web -n demo"},
		{"Repair it.", "kubectl slices sync svc/web -n demo"},
		{"The slice lists every Pod, with its conditions: 4 ready, one not ready, one terminating.", "kubectl get endpointslices -n demo -o wide"},
		{"And explain finds no drift (exit code 0).", "kubectl slices explain svc/web -n demo"},
	} {
		fmt.Printf("# %s\n", s.say)
		if err := step(ctx, env, s.cmd); err != nil {
			return err
		}
		fmt.Println()
	}
	return watchAct(ctx, cp, env)
}

// step prints and runs one shell command; a non-zero exit is shown, not
// an error (explain exits 1 on drift, which the demo shows).
func step(ctx context.Context, env []string, cmd string) error {
	fmt.Printf("$ %s\n", cmd)
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Env = env
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		fmt.Printf("(exit code %d)\n", ee.ExitCode())
		return nil
	}
	return err
}

// watchAct shows sync --watch keeping the slices current while two Pods
// change readiness, then stops it as a Deployment would, with SIGTERM.
func watchAct(ctx context.Context, cp *controlplane.ControlPlane, env []string) error {
	fmt.Println("# A one-shot sync is a snapshot; sync --watch keeps the slices current. It runs while")
	fmt.Println("# web-7d9f-5 turns ready and web-7d9f-1 stops being ready, then gets SIGTERM.")
	fmt.Println("$ kubectl slices sync svc/web -n demo --watch")
	c := exec.CommandContext(ctx, cp.Kubectl(), "slices", "sync", "svc/web", "-n", "demo", "--watch", "--summary-interval=0")
	c.Env = env
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	if err := c.Start(); err != nil {
		return err
	}
	pause := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(d):
		}
	}
	pause(2 * time.Second) // caches fill
	for _, flip := range []struct {
		pod   string
		ready bool
	}{{"web-7d9f-5", true}, {"web-7d9f-1", false}} {
		if err := cp.SetPodReady(ctx, "demo", flip.pod, flip.ready); err != nil {
			return err
		}
		pause(time.Second)
	}
	_ = c.Process.Signal(syscall.SIGTERM)
	err := c.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		fmt.Printf("(exit code %d)\n\n", ee.ExitCode())
	case err != nil:
		return err
	default:
		fmt.Printf("(stopped by SIGTERM, exit code 0)\n\n")
	}
	return nil
}

// seed makes a Deployment-like set of Pods on three Nodes in two zones, and
// a Service selecting them: one Pod not ready, one terminating.
func seed(ctx context.Context, cp *controlplane.ControlPlane) error {
	if err := cp.Namespace(ctx, "demo"); err != nil {
		return err
	}
	for i, zone := range []string{"zone-a", "zone-a", "zone-b"} {
		if err := cp.Node(ctx, controlplane.NodeSpec{Name: fmt.Sprintf("node-%d", i+1), Zone: zone, CPU: "4"}); err != nil {
			return err
		}
	}
	labels := map[string]string{"app": "web"}
	ports := []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}
	for i := 1; i <= 6; i++ {
		spec := controlplane.PodSpec{Name: fmt.Sprintf("web-7d9f-%d", i), Labels: labels, Node: fmt.Sprintf("node-%d", (i-1)%3+1),
			IPs: []string{fmt.Sprintf("10.244.%d.%d", (i-1)%3+1, 10+i)}, Ready: i != 5, Ports: ports, Terminating: i == 6}
		if _, err := cp.Pod(ctx, "demo", spec); err != nil {
			return err
		}
	}
	_, err := cp.Service(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "demo"},
		Spec: corev1.ServiceSpec{Selector: labels,
			Ports: []corev1.ServicePort{controlplane.ServicePort("http", 80, intstr.FromString("http"))}},
	})
	if err != nil {
		return err
	}
	fmt.Println("Seeded namespace demo: 3 Nodes (zone-a, zone-a, zone-b), 6 Pods app=web (one not ready, one terminating), Service web.")
	fmt.Println(strings.Repeat("-", 80))
	return nil
}
