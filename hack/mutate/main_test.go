package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A mutant names the packages whose tests must kill it, or none (the -pkg
// default then applies); -only refuses a name the list lacks.
func TestParseAndSelect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mutants.txt")
	if err := os.WriteFile(path, []byte(`# comment
== planner
# no test line
file: pkg/reconcile/a.go
- 	a := 1
+ 	a := 2

== writer
file: pkg/apply/apply.go
test: ./pkg/apply ./pkg/syncer
- x
- y
+ z
`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := parse(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []mutant{
		{name: "planner", file: "pkg/reconcile/a.go", old: "\ta := 1", new: "\ta := 2"},
		{name: "writer", file: "pkg/apply/apply.go", old: "x\ny", new: "z", pkgs: []string{"./pkg/apply", "./pkg/syncer"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mutant{})); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
	if sel, err := selectMutants(got, []string{"writer"}); err != nil || len(sel) != 1 || sel[0].name != "writer" {
		t.Errorf("select writer: %v %v", sel, err)
	}
	if _, err := selectMutants(got, []string{"writer", "typo"}); err == nil {
		t.Error("an unknown name was not refused")
	}
}

// A package of a nested module is tested from that module's directory:
// go test refuses it from the root.
func TestByModule(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"go.mod", "test/upstreamdiff/go.mod"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), []byte("module m\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := byModule(root, []string{"./pkg/a", "./test/upstreamdiff", "-run=TestX", "./pkg/b/...", "./test/upstreamdiff/x/..."})
	want := []modulePkgs{
		{dir: root, pkgs: []string{"./pkg/a", "./pkg/b/..."}},
		{dir: filepath.Join(root, "test/upstreamdiff"), pkgs: []string{".", "-run=TestX", "./x/..."}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(modulePkgs{})); diff != "" {
		t.Errorf("byModule (-want +got):\n%s", diff)
	}
}
