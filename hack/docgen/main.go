// Command docgen writes the command reference, docs/reference/: for every
// command of the tree, what `kubectl slices COMMAND --help` prints. It runs
// the real command tree (pkg/cmd, whose descriptions and examples are
// pkg/help/text) with --help, so the reference and the help say the same
// by construction; only the version in the default image is written as
// VERSION, since it is the build's.
//
//	go run ./hack/docgen [-out docs/reference]
//
// make docs runs it; make lint regenerates into a temporary directory and
// fails when docs/reference differs, and so does its test under go test
// ./... (make test).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "reference"), "directory to write the reference into")
	flag.Parse()
	files, err := Generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
	if err := write(*out, files); err != nil {
		fmt.Fprintln(os.Stderr, "docgen:", err)
		os.Exit(1)
	}
}

// write replaces the Markdown files of dir with files, so a command that
// is removed loses its page.
func write(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if _, keep := files[filepath.Base(f)]; !keep {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", filepath.Join(dir, name))
	}
	return nil
}
