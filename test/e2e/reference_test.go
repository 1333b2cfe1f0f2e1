package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The generated command reference (docs/reference, make docs) says what
// `kubectl slices COMMAND --help` prints through a real kubectl, page by
// page. The pages write the build's version and the home directory as
// placeholders (hack/docgen), so the binary's are put back first.
func TestHelpMatchesReference(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot(), "docs", "reference", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 10 {
		t.Fatalf("docs/reference holds %d pages; run make docs", len(pages))
	}
	for _, page := range pages {
		args, want := referenceHelp(t, page)
		t.Run(filepath.Base(page), func(t *testing.T) {
			got := slices(t, args...).mustCode(t, 0).Stdout
			got = strings.ReplaceAll(got, "kubectl-slices:v0.0.0-e2e", "kubectl-slices:VERSION")
			if home := os.Getenv("HOME"); home != "" && home != "/" {
				got = strings.ReplaceAll(got, "'"+home+"/", "'$HOME/")
			}
			if strings.TrimRight(got, "\n") != want {
				t.Errorf("kubectl slices %s differs from %s (run make docs)\n--- kubectl:\n%s\n--- reference:\n%s",
					strings.Join(args, " "), page, got, want)
			}
		})
	}
}

// referenceHelp is the command line of a reference page's fenced block
// ("$ kubectl slices ARGS") and the output that follows it.
func referenceHelp(t *testing.T, page string) (args []string, help string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "\n$ kubectl slices"
	text := string(b)
	start := strings.Index(text, prompt)
	if start < 0 {
		t.Fatalf("%s: no %q block", page, strings.TrimSpace(prompt))
	}
	fenceStart := strings.LastIndex(text[:start], "\n") + 1
	fence := text[fenceStart:start]
	rest := text[start+len(prompt):]
	line, body, _ := strings.Cut(rest, "\n")
	end := strings.Index(body, "\n"+fence+"\n")
	if fence == "" || strings.Trim(fence, "`") != "" || end < 0 {
		t.Fatalf("%s: the help is not fenced", page)
	}
	return strings.Fields(line), body[:end]
}
