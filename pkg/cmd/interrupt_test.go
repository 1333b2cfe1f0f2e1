package cmd

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// stalledServer accepts TCP connections and never answers, as an API server
// behind a hung load balancer. Each accepted connection is signalled on the
// returned channel.
func stalledServer(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 64)
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String(), ch
}

// writeKubeconfig points a kubeconfig at server, with namespace ns.
func writeKubeconfig(t *testing.T, server, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u, namespace: %s}
current-context: x
`, server, ns)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Against a server that never answers, an interrupt stops every command
// that talks to the cluster at once: exit 130, and no error about the
// request it cut short.
func TestInterruptStalledServer(t *testing.T) {
	addr, accepted := stalledServer(t)
	t.Setenv("KUBECONFIG", writeKubeconfig(t, "https://"+addr, "shop"))
	for _, args := range [][]string{
		{"sync", "svc/web"},
		{"sync", "--all", "-A"},
		{"diff", "svc/web"},
		{"explain", "svc/web"},
		{"version"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			root := NewRootCommand(streams)
			root.SetArgs(args)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var sent time.Time
			go func() {
				select {
				case <-accepted: // the request is on the wire and stalls
				case <-time.After(10 * time.Second):
				}
				sent = time.Now()
				cancel(&exit.InterruptedError{Signal: syscall.SIGINT})
			}()
			err := exit.InterruptWins(ctx, root.ExecuteContext(ctx))
			took := time.Since(sent)
			if code := exit.Code(err); code != exit.Interrupted || err.Error() != "interrupted" {
				t.Fatalf("exit %d (%v), want %d and \"interrupted\"", code, err, exit.Interrupted)
			}
			if took > 2*time.Second {
				t.Errorf("returned %v after the interrupt", took)
			}
			if s := errOut.String(); s != "" {
				t.Errorf("stderr %q, want nothing besides main's one line", s)
			}
			if s := out.String(); strings.Contains(s, "error") || strings.Contains(s, "Server Version") {
				t.Errorf("stdout %q", s)
			}
		})
	}
}

// A connection refused names the server it was refused by.
func TestUnreachableNamesServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	t.Setenv("KUBECONFIG", writeKubeconfig(t, "https://"+addr, "shop"))
	for _, args := range [][]string{{"sync", "svc/web"}, {"explain", "svc/web"}, {"version"}, {"diff", "-l", "a=b"}} {
		_, errOut, code := runCmd(t, args...)
		want := "cannot reach the API server at " + addr + ": connection refused"
		if code != exit.API || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", args, code, errOut, exit.API, want)
		}
	}
}
