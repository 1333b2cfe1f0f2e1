package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const bashCompletion = "/usr/share/bash-completion/bash_completion"

// TAB in a real bash, with Debian's bash-completion and kubectl's own
// completion script loaded: kubectl runs kubectl_complete-slices for the
// plugin's words, which runs the plugin's __complete against the cluster.
func TestBashCompletionThroughKubectl(t *testing.T) {
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Skipf("bash-completion is not installed (%s missing): apt-get install -y bash-completion", bashCompletion)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	ns := newNamespace(t, shared)
	mustService(t, shared, service(ns, "web"))
	mustService(t, shared, service(ns, "api"))

	if got := bashComplete(t, "kubectl slices sy"); strings.Join(got, " ") != "sync" {
		t.Errorf("kubectl slices sy<TAB>: %q, want sync", got)
	}
	if got := bashComplete(t, "kubectl slices sync -n "+ns+" svc/"); strings.Join(got, " ") != "svc/api svc/web" {
		t.Errorf("kubectl slices sync svc/<TAB>: %q, want svc/api svc/web", got)
	}
	if got := bashComplete(t, "kubectl slices explain svc/web --show-pods "); strings.Join(got, " ") != "all excluded" {
		t.Errorf("--show-pods <TAB>: %q", got)
	}
}

// bashComplete presses TAB at the end of line, the way bash does: it sets
// COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT and COMP_TYPE and calls the
// function that `complete -p kubectl` names; it returns COMPREPLY.
func bashComplete(t *testing.T, line string) []string {
	t.Helper()
	script := `
set -e
source ` + bashCompletion + `
source <(kubectl completion bash)
fn=$(complete -p kubectl | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
set +e
# compopt works only while readline runs a completion; outside, record it.
compopt() { echo "compopt $*" >&2; }
read -r -a COMP_WORDS <<< "$LINE"
case "$LINE" in *' ') COMP_WORDS+=("") ;; esac
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE=$LINE
COMP_POINT=${#LINE}
COMP_TYPE=9
"$fn" kubectl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-c", script)
	cmd.Env = append(os.Environ(), "LINE="+line, "KUBECONFIG="+shared.Kubeconfig,
		"PATH="+pluginDir+string(os.PathListSeparator)+shared.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash completion of %q: %v\n%s%s", line, err, out, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("%q: %s", line, strings.TrimSpace(stderr.String()))
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			got = append(got, l)
		}
	}
	return got
}
