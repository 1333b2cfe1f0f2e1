package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var reference = filepath.Join("..", "..", "docs", "reference")

// docs/reference is what the command tree generates today: a help text
// changed without `make docs` fails here (make test) and in make lint.
func TestReferenceIsCurrent(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	pages, err := filepath.Glob(filepath.Join(reference, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(p)] = b
	}
	for _, name := range sortedKeys(want, got) {
		if diff := cmp.Diff(strings.Split(string(want[name]), "\n"), strings.Split(string(got[name]), "\n")); diff != "" {
			t.Errorf("docs/reference/%s is stale; run `make docs` (-generated +on disk):\n%s", name, diff)
		}
	}
}

// Every command a user can run has a page, and each page holds that
// command's --help output exactly, fenced, after the command line.
func TestEveryCommandHasItsHelpPage(t *testing.T) {
	files, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{IndexFile, "sync.md", "diff.md", "explain.md", "check.md", "release.md", "prune.md", "deploy.md", "webhook.md", "version.md", "completion.md", "options.md"} {
		if _, ok := files[name]; !ok {
			t.Errorf("no page %s", name)
		}
	}
	help, err := Help([]string{"sync"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(help, "Usage:\n  kubectl slices sync ") || !strings.Contains(help, "--dry-run='none'") {
		t.Fatalf("sync --help is not kubectl's layout:\n%s", help)
	}
	if page := string(files["sync.md"]); !strings.Contains(page, "```\n$ kubectl slices sync --help\n"+strings.TrimRight(help, "\n")+"\n```\n") {
		t.Errorf("sync.md does not hold sync --help:\n%s", page)
	}
	if !strings.Contains(string(files["deploy.md"]), "kubectl-slices:"+VersionPlaceholder) {
		t.Errorf("deploy.md: the default image should name %s, not this build's version", VersionPlaceholder)
	}
	for name, b := range files {
		if home, _ := os.UserHomeDir(); home != "" && home != "/" && strings.Contains(string(b), home+"/") {
			t.Errorf("%s names this machine's home directory %s", name, home)
		}
	}
}

func sortedKeys(maps ...map[string][]byte) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
