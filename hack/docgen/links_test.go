package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var repoRoot = filepath.Join("..", "..")

// Every relative link of README.md and docs/ points to a file that exists,
// and to a heading of it when it names one (as GitHub renders anchors).
func TestDocLinksResolve(t *testing.T) {
	pages := []string{filepath.Join(repoRoot, "README.md")}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			pages = append(pages, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range pages {
		for _, bad := range brokenLinks(t, page) {
			t.Error(bad)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("found only %d pages under docs/", checked)
	}
}

// A link to a missing file or heading is found (the check itself works).
func TestBrokenLinksAreFound(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.md", "# B\n\n## sync --watch\n\n## `check -A` (`make bench-check`)\n")
	write("a.md", "# A\n\n[ok](b.md#sync---watch) [ok](b.md#check--a-make-bench-check) [ok](#a) [web](https://example.com/x)\n"+
		"[gone](c.md) [no heading](b.md#nope) [self](#nope)\n\n```\n[in code](nowhere.md)\n```\n")
	got := brokenLinks(t, filepath.Join(dir, "a.md"))
	if len(got) != 3 {
		t.Fatalf("want 3 broken links (c.md, b.md#nope, #nope), got %d: %q", len(got), got)
	}
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// brokenLinks lists the relative links of page (outside code blocks) that
// do not resolve.
func brokenLinks(t *testing.T, page string) []string {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for n, line := range proseLines(string(text)) {
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			info, err := os.Stat(path)
			if err != nil {
				out = append(out, fmt.Sprintf("%s:%d: %s: no such file", page, n+1, target))
				continue
			}
			if info.IsDir() {
				path = filepath.Join(path, "README.md")
			}
			if anchor != "" && !hasAnchor(t, path, anchor) {
				out = append(out, fmt.Sprintf("%s:%d: %s: no heading with that anchor", page, n+1, target))
			}
		}
	}
	return out
}

// proseLines is the page's lines with those of fenced code blocks blanked,
// so line numbers still match.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return lines
}

func hasAnchor(t *testing.T, path, anchor string) bool {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range proseLines(string(text)) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		slug := slugOf(strings.TrimSpace(strings.TrimLeft(line, "#")))
		if k := seen[slug]; k > 0 {
			seen[slug]++
			slug = fmt.Sprintf("%s-%d", slug, k)
		} else {
			seen[slug] = 1
		}
		if slug == anchor {
			return true
		}
	}
	return false
}

// slugOf is GitHub's anchor of a heading: lower case, punctuation but '-'
// and '_' dropped, each space a '-'.
func slugOf(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The README tells the story and links into docs/; the manual lives there.
func TestReadmeStaysShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 300 {
		t.Errorf("README.md has %d lines; keep it at most 300 and move the detail into docs/", n)
	}
}
