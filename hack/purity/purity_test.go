package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The pure packages of this tree pass.
func TestPurePackagesArePure(t *testing.T) {
	for _, p := range Pure {
		v, err := Check(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range v {
			t.Errorf("%s", line)
		}
	}
}

// A package that imports client-go, os or klog, or reads the clock, fails;
// test files and pure imports (net/netip, time.Duration) do not count.
func TestCheckFindsViolations(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", `package p

import (
	"net/netip"
	"os"
	clock "time"

	"k8s.io/client-go/kubernetes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"github.com/kubectl-slices/kubectl-slices/pkg/cluster"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

var _ = netip.Addr{}
var _ = os.Args
var _ kubernetes.Interface
var _ cluster.Reader
var _ reconcile.Plan

func f(d clock.Duration) { _ = clock.Now(); _ = metav1.Now() }
`)
	write("b.go", "package p\n\nimport \"k8s.io/klog/v2\"\n\nvar _ = klog.V\n")
	write("a_test.go", "package p\n\nimport \"os\"\n\nvar _ = os.Args\n")
	v, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range v {
		got = append(got, line[strings.Index(line, ": ")+2:])
	}
	want := []string{
		"imports os (file system or process access)",
		"imports k8s.io/client-go/kubernetes (an API client)",
		"imports github.com/kubectl-slices/kubectl-slices/pkg/cluster (a project package that is not pure)",
		"calls time.Now (reads the clock: take the time as an input)",
		"calls k8s.io/apimachinery/pkg/apis/meta/v1.Now (reads the clock: take the time as an input)",
		"imports k8s.io/klog/v2 (logging)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// webhook, explain and printers reach no package that writes in this tree.
func TestReadOnlyPackagesWriteNothing(t *testing.T) {
	v, err := CheckReadOnly(filepath.Join("..", ".."), ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range v {
		t.Errorf("%s", line)
	}
}

// A read-only package fails when it imports a writer or a writing client,
// directly or through another project package; pkg/cluster's client, the
// client-go scheme and test files do not count.
func TestCheckReadOnlyFindsWriters(t *testing.T) {
	root, write := importTree(t)
	m := `	_ "` + module
	write("pkg/printers", "a.go", m+"pkg/helper\"\n"+m+"pkg/cluster\"\n\t_ \"k8s.io/client-go/kubernetes/scheme\"\n")
	write("pkg/printers", "a_test.go", m+"pkg/apply\"\n")
	write("pkg/helper", "h.go", m+"pkg/syncer\"\n\t_ \"k8s.io/client-go/rest\"\n")
	write("pkg/syncer", "s.go", "\t_ \"k8s.io/client-go/kubernetes\"\n")
	write("pkg/cluster", "c.go", "\t_ \"k8s.io/client-go/kubernetes\"\n")
	write("pkg/webhook", "w.go", "\t_ \"k8s.io/client-go/kubernetes/typed/discovery/v1\"\n")
	write("pkg/explain", "e.go", m+"pkg/cluster\"\n")
	v, err := CheckReadOnly(root, ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg/webhook: reaches k8s.io/client-go/kubernetes/typed/discovery/v1 (a client that can write)",
		"pkg/printers: reaches k8s.io/client-go/rest (a client that can write) through pkg/helper",
		"pkg/printers: reaches pkg/syncer (a package that writes) through pkg/helper",
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// pkg/exit imports no project package but the leaves in this tree.
func TestBottomPackagesImportNoProjectPackage(t *testing.T) {
	v, err := CheckBottom(filepath.Join("..", ".."), Bottom)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range v {
		t.Errorf("%s", line)
	}
}

// A bottom package fails when it imports a project package that is not a
// leaf, directly or through a leaf; a writer is named as such; a leaf, the
// libraries and test files do not count.
func TestCheckBottomFindsImports(t *testing.T) {
	root, write := importTree(t)
	m := `	_ "` + module
	write("pkg/exit", "a.go", m+"pkg/apply\"\n"+m+"internal/english\"\n\t_ \"k8s.io/apimachinery/pkg/api/errors\"\n")
	write("pkg/exit", "b.go", m+"pkg/daemon\"\n"+m+"pkg/apply\"\n")
	write("pkg/exit", "a_test.go", m+"pkg/syncer\"\n")
	write("internal/english", "e.go", m+"pkg/outcome\"\n")
	v, err := CheckBottom(root, Bottom)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg/exit: imports pkg/apply (a package that writes)",
		"pkg/exit: imports pkg/daemon (a package that writes)",
		"pkg/exit: imports pkg/outcome (a project package that is not a leaf) through internal/english",
	}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// importTree is a temporary tree and a writer of Go files in it, each
// only a package clause and the imports given.
func importTree(t *testing.T) (string, func(pkg, name, imports string)) {
	t.Helper()
	root := t.TempDir()
	return root, func(pkg, name, imports string) {
		dir := filepath.Join(root, pkg)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		src := "package " + filepath.Base(pkg) + "\n\nimport (\n" + imports + ")\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
