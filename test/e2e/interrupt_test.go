package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Against an API server that accepts connections and never answers, Ctrl-C
// stops sync, diff, explain and version within 2 s: exit 130 and one line.
func TestInterruptStalledServer(t *testing.T) {
	kubeconfig, accepted := stalledServer(t)

	for _, args := range [][]string{{"sync", "svc/x"}, {"diff", "svc/x"}, {"explain", "svc/x"}, {"version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(shared.Kubectl(), append([]string{"slices"}, args...)...)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig,
				"PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-accepted: // the first request is on the wire and stalls
			case err := <-exited:
				t.Fatalf("exited before reaching the server: %v\n%s", err, errOut.String())
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("never connected to the stalled server")
			}
			time.Sleep(300 * time.Millisecond) // well inside the request
			// kubectl execs the plugin in its own process: the signal
			// reaches kubectl-slices as Ctrl-C in a shell would.
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			sent := time.Now()
			var waitErr error
			select {
			case waitErr = <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				t.Fatal("still running 10 s after SIGINT")
			}
			took := time.Since(sent)
			var ee *exec.ExitError
			if !errors.As(waitErr, &ee) || ee.ExitCode() != 130 {
				t.Errorf("exit %v, want 130; stderr %q", waitErr, errOut.String())
			}
			if took > 2*time.Second {
				t.Errorf("exited %v after SIGINT, want within 2 s", took)
			}
			if got := errOut.String(); got != "interrupted\n" {
				t.Errorf("stderr %q, want the one line \"interrupted\"", got)
			}
			t.Logf("exit %d %v after SIGINT; stdout %q", ee.ExitCode(), took.Round(time.Millisecond), out.String())
		})
	}
}
