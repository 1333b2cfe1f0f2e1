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
