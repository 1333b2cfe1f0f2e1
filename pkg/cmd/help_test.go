package cmd

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-slices/kubectl-slices/pkg/completion"
	"github.com/kubectl-slices/kubectl-slices/pkg/exit"
)

// Every command, including ones added later, has kubectl's three pieces of
// help: a one-line summary, a long description and examples.
func TestEveryCommandHasHelp(t *testing.T) {
	root := NewRootCommand(genericiooptions.NewTestIOStreamsDiscard())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || strings.HasPrefix(c.Name(), "__") {
			return
		}
		if c.Short == "" || strings.Contains(c.Short, "\n") || strings.HasSuffix(c.Short, ".") {
			t.Errorf("%s: Short %q: want one line without a final full stop", c.CommandPath(), c.Short)
		}
		if c.Long == "" || c.Example == "" {
			t.Errorf("%s: needs Long and Example", c.CommandPath())
		}
		if c.Example != "" && !strings.Contains(c.Example, "kubectl slices") {
			t.Errorf("%s: examples should show kubectl slices", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// Global flags live in `kubectl slices options`, not under every command.
func TestHelpListsGlobalFlagsOnlyInOptions(t *testing.T) {
	t.Setenv("COLUMNS", "100")
	for _, args := range [][]string{{"--help"}, {"sync", "--help"}, {"diff", "--help"}, {"explain", "--help"}, {"version", "--help"}, {"completion", "--help"}} {
		out, _, code := runCmd(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		if strings.Contains(out, "--kubeconfig") || strings.Contains(out, "--as-group") {
			t.Errorf("%v lists global flags:\n%s", args, out)
		}
		if !strings.Contains(out, `Use "kubectl slices options" for a list of global command-line options`) {
			t.Errorf("%v: no pointer to options:\n%s", args, out)
		}
		if strings.Contains(out, `"kubectl-slices `) || strings.Contains(out, "\n  kubectl-slices ") {
			t.Errorf("%v names the binary, not kubectl slices:\n%s", args, out)
		}
	}
	out, _, _ := runCmd(t, "sync", "--help")
	for _, want := range []string{"Examples:\n  # ", "Options:\n", "    --dry-run='none':", "Usage:\n  kubectl slices sync "} {
		if !strings.Contains(out, want) {
			t.Errorf("sync --help lacks %q:\n%s", want, out)
		}
	}
	out, _, code := runCmd(t, "options")
	if code != 0 || !strings.HasPrefix(out, "The following options can be passed to any command:") {
		t.Fatalf("options: exit %d\n%s", code, out)
	}
	for _, want := range []string{"--kubeconfig=''", "--context=''", "-n, --namespace=''", "-A, --all-namespaces=false", "--color='auto'", "--request-timeout='0'"} {
		if !strings.Contains(out, want) {
			t.Errorf("options lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--profile") {
		t.Errorf("options shows hidden flags")
	}
}

func TestCompletionCommand(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "__start_kubectl-slices",
		"zsh":        "#compdef kubectl-slices",
		"fish":       "complete -c kubectl-slices",
		"powershell": "Register-ArgumentCompleter",
	} {
		out, _, code := runCmd(t, "completion", shell)
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("completion %s: exit %d, output lacks %q", shell, code, want)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		_, errOut, code := runCmd(t, args...)
		if want := "error: name one shell: bash, zsh, fish or powershell (kubectl slices completion bash)\n"; code != exit.Usage || errOut != want {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", args, code, errOut, exit.Usage, want)
		}
	}
}

// A completion that needs the cluster gives up after completion.Timeout when
// the API server does not answer, and then offers nothing.
func TestCompletionIsBoundedInTime(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and never answer
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	server := "--server=https://" + ln.Addr().String()
	for _, args := range [][]string{{"sync", server, "svc/"}, {"sync", server, "-n", ""}} {
		start := time.Now()
		out, _, code := runCmd(t, append([]string{"__complete"}, args...)...)
		took := time.Since(start)
		if code != 0 || strings.Contains(out, "svc/") || took > completion.Timeout+2*time.Second {
			t.Errorf("%v: exit %d after %v: %q", args, code, took, out)
		}
	}
}

// --context, --cluster and --user complete from the kubeconfig, sorted.
func TestCompleteKubeconfigNames(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: prod, cluster: {server: "https://127.0.0.1:1"}}
- {name: dev, cluster: {server: "https://127.0.0.1:2"}}
users:
- {name: alice, user: {}}
contexts:
- {name: prod-admin, context: {cluster: prod, user: alice}}
- {name: dev-admin, context: {cluster: dev, user: alice}}
current-context: dev-admin
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	for flag, want := range map[string]string{"--context": "dev-admin prod-admin", "--cluster": "dev prod", "--user": "alice"} {
		out, _, code := runCmd(t, "__complete", "sync", flag, "")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(line, ":") {
				got = append(got, line)
			}
		}
		if code != 0 || strings.Join(got, " ") != want {
			t.Errorf("%s: %q (exit %d), want %s", flag, got, code, want)
		}
	}
}
