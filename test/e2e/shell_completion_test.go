package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// zsh and fish complete `kubectl slices` from the live API server in the real
// shell: through kubectl's own completion (kubectl runs kubectl_complete-slices
// from PATH for the plugin's words) and through the standalone script
// `kubectl slices completion SHELL` prints for the kubectl-slices executable.
// PowerShell is not driven: neither Debian nor the Go module proxy ships pwsh.

// shellCompletionCases are the words typed and the candidates TAB must offer,
// for one Service namespace; prefix is "kubectl slices" or "kubectl-slices".
func shellCompletionCases(prefix, ns string) []struct{ line, want string } {
	return []struct{ line, want string }{
		{prefix + " sy", "sync"},
		{prefix + " sync -n " + ns + " svc/", "svc/api svc/web"},
	}
}

func TestZshCompletion(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed: apt-get install -y zsh (.ci/run does)")
	}
	if err := exec.Command(zsh, "-f", "-c", "zmodload zsh/zpty").Run(); err != nil {
		t.Skipf("zsh lacks the zsh/zpty module: %v", err)
	}
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustService(t, shared, service(ns, "api"))
	for _, s := range []struct{ name, setup, prefix string }{
		{"through kubectl", "source <(kubectl completion zsh)", "kubectl slices"},
		{"standalone script", "source <(kubectl slices completion zsh)", "kubectl-slices"},
	} {
		t.Run(s.name, func(t *testing.T) {
			for _, c := range shellCompletionCases(s.prefix, ns) {
				if got := strings.Join(zshComplete(t, zsh, s.setup, c.line), " "); got != c.want {
					t.Errorf("zsh, %s: %s<TAB> offered %q, want %q", s.setup, c.line, got, c.want)
				}
			}
		})
	}
}

func TestFishCompletion(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed: apt-get install -y fish (.ci/run does)")
	}
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustService(t, shared, service(ns, "api"))
	for _, s := range []struct{ name, setup, prefix string }{
		{"through kubectl", "kubectl completion fish | source", "kubectl slices"},
		{"standalone script", "kubectl slices completion fish | source", "kubectl-slices"},
	} {
		t.Run(s.name, func(t *testing.T) {
			for _, c := range shellCompletionCases(s.prefix, ns) {
				if got := strings.Join(fishComplete(t, fish, s.setup, c.line), " "); got != c.want {
					t.Errorf("fish, %s: %s<TAB> offered %q, want %q", s.setup, c.line, got, c.want)
				}
			}
		})
	}
}

// zshDriver runs an interactive zsh on a pseudo-terminal (zsh/zpty) with the
// completion system loaded and $SETUP run, types $LINE and presses TAB. A
// compadd wrapper records the matches the completion functions add (in the
// manner of zsh-capture-completion) into $OUT, and a post-completion hook
// writes $OUT.done; the inner shell never runs the line.
const zshDriver = `
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z 'autoload -U compinit && compinit -u -D'
zpty -w z "$SETUP"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -A hits "$@"; print -rl -- "${hits[@]}" >> "$OUT"; builtin compadd "$@"; }'
zpty -w z 'zcomp-done() { : > "$OUT.done" }; comppostfuncs=(zcomp-done)'
zpty -w z 'bindkey "^I" complete-word; bindkey -r "^M"; bindkey -r "^J"'
zpty -w -n z "$LINE"$'\t'
for i in {1..600}; do [[ -e $OUT.done ]] && break; sleep 0.1; done
zpty -d z
[[ -e $OUT.done ]] || { print -u2 "no completion within 60s"; exit 4 }
`

// zshComplete returns the sorted, distinct matches zsh offers for line.
func zshComplete(t *testing.T, zsh, setup, line string) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "matches")
	if err := os.WriteFile(out, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	runShell(t, exec.Command(zsh, "-f", "-c", zshDriver), "SETUP="+setup, "LINE="+line, "OUT="+out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return sortedWords(string(b))
}

// fishComplete asks fish what it would offer at the end of line, with
// `complete -C`, the command fish's own TAB uses; descriptions are dropped.
func fishComplete(t *testing.T, fish, setup, line string) []string {
	t.Helper()
	out := runShell(t, exec.Command(fish, "--no-config", "-c", setup+`; complete -C "$LINE"`), "LINE="+line)
	var words []string
	for _, l := range strings.Split(out, "\n") {
		words = append(words, strings.SplitN(l, "\t", 2)[0])
	}
	return sortedWords(strings.Join(words, "\n"))
}

// runShell runs cmd with the plugin, its completion helper and the control
// plane's kubectl on PATH against the shared cluster, and returns its stdout.
func runShell(t *testing.T, cmd *exec.Cmd, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = append(os.Environ(), append(env, "KUBECONFIG="+shared.Kubeconfig, "HOME="+t.TempDir(),
		"PATH="+pluginDir+string(os.PathListSeparator)+shared.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", filepath.Base(cmd.Path), env, err, out, stderr.String())
	}
	return string(out)
}

func sortedWords(s string) []string {
	var words []string
	for _, w := range strings.Split(s, "\n") {
		if w = strings.TrimSpace(w); w != "" && !contains(words, w) {
			words = append(words, w)
		}
	}
	sort.Strings(words)
	return words
}
