// Command mutate checks that the tests can fail: it applies each mutant of
// a list (one small change to the code) to a temporary copy of the
// repository, never to the working tree, runs the tests of the packages the
// mutant names (the planner's by default) there, and reports which tests
// killed each mutant and which survived.
//
//	go run ./hack/mutate [-mutants hack/mutants.txt] [-only name,...] [-pkg ./pkg/reconcile] [-timeout 5m]
//
// It exits 1 when a mutant survives or does not apply: a survivor is a rule
// no test checks.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

type mutant struct {
	name, file, old, new string
	// pkgs are the packages whose tests must kill the mutant; empty means
	// the -pkg default.
	pkgs []string
}

func main() {
	list := flag.String("mutants", "hack/mutants.txt", "the list of mutants")
	only := flag.String("only", "", "comma-separated mutant names to run (default all)")
	pkg := flag.String("pkg", "./pkg/reconcile", "the package whose tests must kill a mutant that names none (\"test:\" line)")
	timeout := flag.Duration("timeout", 5*time.Minute, "time limit of one test run")
	flag.Parse()
	if err := run(*list, *only, *pkg, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(list, only, pkg string, timeout time.Duration) error {
	root, err := output(".", "git", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	root = strings.TrimSpace(root)
	mutants, err := parse(filepath.Join(root, list))
	if err != nil {
		return err
	}
	if only != "" {
		if mutants, err = selectMutants(mutants, strings.Split(only, ",")); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "kubectl-slices-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyRepo(root, tmp); err != nil {
		return err
	}
	fmt.Printf("copy of %s in %s; %d mutants\n", root, tmp, len(mutants))
	// The unmutated tests of every package named must pass, or a failure
	// would be counted as a kill.
	baseline := map[string]bool{}
	for i, m := range mutants {
		if len(m.pkgs) == 0 {
			mutants[i].pkgs = []string{pkg}
		}
		// A list may carry flags (-run=TestX) that belong with its
		// packages: the list is run as a whole, once per distinct list.
		key := strings.Join(mutants[i].pkgs, " ")
		if baseline[key] {
			continue
		}
		baseline[key] = true
		if ok, _, out := test(tmp, mutants[i].pkgs, timeout); !ok {
			return fmt.Errorf("the unmutated tests of %s fail, nothing to measure:\n%s", key, out)
		}
	}
	bad := 0
	fmt.Printf("%-50s %-9s %s\n", "MUTANT", "RESULT", "KILLED BY")
	for _, m := range mutants {
		path := filepath.Join(tmp, m.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := bytes.Count(orig, []byte(m.old)); n != 1 {
			fmt.Printf("%-50s %-9s the text to replace occurs %d times in %s\n", m.name, "INVALID", n, m.file)
			bad++
			continue
		}
		if err := os.WriteFile(path, bytes.Replace(orig, []byte(m.old), []byte(m.new), 1), 0o644); err != nil {
			return err
		}
		start := time.Now()
		ok, killers, out := test(tmp, m.pkgs, timeout)
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			return err
		}
		switch {
		case ok:
			fmt.Printf("%-50s %-9s - (%s)\n", m.name, "SURVIVED", time.Since(start).Round(time.Second))
			bad++
		case len(killers) == 0:
			// No test failed: the mutant did not build, or the run timed out.
			fmt.Printf("%-50s %-9s %s\n", m.name, "INVALID", firstLine(out))
			bad++
		default:
			fmt.Printf("%-50s %-9s %s (%s)\n", m.name, "killed", strings.Join(killers, ", "), time.Since(start).Round(time.Second))
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d mutants survived or did not apply", bad, len(mutants))
	}
	fmt.Printf("all %d mutants killed\n", len(mutants))
	return nil
}

var failLine = regexp.MustCompile(`(?m)^--- FAIL: (\S+)`)

// test runs the packages' tests and returns whether they passed, the
// top-level tests that failed and the output. A package of a nested module
// (test/upstreamdiff has its own go.mod) is tested from that module's
// directory, where go test finds it.
func test(dir string, pkgs []string, timeout time.Duration) (bool, []string, string) {
	ok, killers, out := true, []string(nil), ""
	for _, m := range byModule(dir, pkgs) {
		passed, k, o := testIn(m.dir, m.pkgs, timeout)
		ok, killers, out = ok && passed, append(killers, k...), out+o
	}
	return ok, killers, out
}

func testIn(dir string, pkgs []string, timeout time.Duration) (bool, []string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+30*time.Second)
	defer cancel()
	// Packages first, then flags: go test takes what follows a flag after
	// the package list for the test binary.
	args := []string{"test"}
	var flags []string
	for _, p := range pkgs {
		if strings.HasPrefix(p, "-") {
			flags = append(flags, p)
		} else {
			args = append(args, p)
		}
	}
	args = append(append(args, flags...), "-count=1", "-timeout", timeout.String())
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var killers []string
	for _, m := range failLine.FindAllStringSubmatch(string(out), -1) {
		killers = append(killers, m[1])
	}
	return err == nil, killers, string(out)
}

type modulePkgs struct {
	dir  string
	pkgs []string
}

// byModule groups package patterns ("./pkg/a", "./test/upstreamdiff/...")
// by the module that holds them, in the order first named, each pattern
// made relative to its module's directory. A flag ("-run=TestX") goes with
// the module of the package before it, so that one slow module can run
// only the tests that matter while another runs all of its own.
func byModule(root string, pkgs []string) []modulePkgs {
	var out []modulePkgs
	index, last := map[string]int{}, 0
	for _, p := range pkgs {
		if strings.HasPrefix(p, "-") && len(out) > 0 {
			out[last].pkgs = append(out[last].pkgs, p)
			continue
		}
		dir, rel := moduleOf(root, p)
		i, ok := index[dir]
		if !ok {
			i, index[dir] = len(out), len(out)
			out = append(out, modulePkgs{dir: dir})
		}
		out[i].pkgs = append(out[i].pkgs, rel)
		last = i
	}
	return out
}

// moduleOf returns the directory of the innermost module under root whose
// go.mod holds the pattern p, and p relative to it.
func moduleOf(root, p string) (string, string) {
	path := filepath.Clean(strings.TrimSuffix(p, "/..."))
	for dir := path; dir != "." && dir != string(filepath.Separator) && !strings.HasPrefix(dir, ".."); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err != nil {
			continue
		}
		rel, _ := filepath.Rel(dir, filepath.Clean(p))
		if rel == "." {
			return filepath.Join(root, dir), "."
		}
		return filepath.Join(root, dir), "./" + rel
	}
	return root, p
}

// parse reads the mutant list: blocks of "== name", "file: path", an
// optional "test: ./pkg/a ./pkg/b" (the packages whose tests must kill it;
// a package may lie in a nested module such as ./test/upstreamdiff, and a
// flag such as -run=TestX after a package applies to its module's run),
// then lines "- " (text to replace) and "+ " (its replacement), joined by
// newlines. "#" starts a comment line.
func parse(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mutant
	var olds, news []string
	flush := func() {
		if len(out) > 0 {
			out[len(out)-1].old, out[len(out)-1].new = strings.Join(olds, "\n"), strings.Join(news, "\n")
		}
		olds, news = nil, nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "== "):
			flush()
			out = append(out, mutant{name: strings.TrimSpace(line[3:])})
		case len(out) == 0:
			return nil, fmt.Errorf("%s:%d: %q before the first \"== name\"", path, n, line)
		case strings.HasPrefix(line, "file: "):
			out[len(out)-1].file = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "test: "):
			out[len(out)-1].pkgs = strings.Fields(line[6:])
		case strings.HasPrefix(line, "-"):
			olds = append(olds, strings.TrimPrefix(line[1:], " "))
		case strings.HasPrefix(line, "+"):
			news = append(news, strings.TrimPrefix(line[1:], " "))
		default:
			return nil, fmt.Errorf("%s:%d: cannot read %q", path, n, line)
		}
	}
	flush()
	for _, m := range out {
		if m.file == "" || m.old == "" {
			return nil, fmt.Errorf("%s: mutant %q needs a file and a text to replace", path, m.name)
		}
	}
	return out, sc.Err()
}

// selectMutants keeps the named mutants; a name not in the list is an
// error, not a silent zero-mutant run that passes.
func selectMutants(all []mutant, names []string) ([]mutant, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[strings.TrimSpace(n)] = true
	}
	var out []mutant
	for _, m := range all {
		if want[m.name] {
			out = append(out, m)
			delete(want, m.name)
		}
	}
	for n := range want {
		return nil, fmt.Errorf("no mutant named %q", n)
	}
	return out, nil
}

// copyRepo copies the files git knows of (tracked, and untracked but not
// ignored), so the copy is the working tree as it stands.
func copyRepo(root, dst string) error {
	files, err := output(root, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	for _, f := range strings.Split(files, "\x00") {
		if f == "" {
			continue
		}
		src := filepath.Join(root, f)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the working tree, or not a plain file
		}
		if err := copyFile(src, filepath.Join(dst, f), info.Mode()); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return string(out), nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return "no output"
}
