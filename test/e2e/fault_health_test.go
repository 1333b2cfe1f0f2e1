package e2e

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// healthCut is how long the replica is cut off: past the loop's bound for
// /readyz, short of its bound for /healthz.
const healthCut = 40 * time.Second

// One replica is cut off from the API server (its proxy blackholed) for
// 40 s: its /readyz turns non-200 within the bound the loop states
// (pkg/daemon BlindReady, read from the source: 15 s) + 1 s for the polls,
// its /healthz stays 200 (the cut is shorter than BlindLive, 60 s: a
// restart would not help), and /readyz answers 200 again within 10 s of
// the heal.
//
// Flip tried: before the blind probes (pkg/daemon contact.go) /readyz stayed
// 200 through the 40 s cut and the test failed on it; with them, /readyz
// answered 503 14.96 s into the cut. With /readyz checking BlindLive in
// place of BlindReady (an uncommitted edit), it failed the same way.
func TestFaultHealthTellsTheTruth(t *testing.T) {
	t.Parallel()
	readySilence, healthSilence := daemonBound(t, "BlindReady"), daemonBound(t, "BlindLive")
	if healthCut <= readySilence || healthCut >= healthSilence {
		t.Fatalf("a %v cut does not fall between the loop's bounds %v and %v: adjust healthCut", healthCut, readySilence, healthSilence)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := faultCluster(t, ctx)
	const ns = "health"
	if err := cp.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	f := newFleet(cp, ns, 365)
	f.addService(t, "web", 2)
	grantLoopRights(t, cp, "replica-a")
	r := startFaultReplica(t, cp, "replica-a", "sync", "--watch", "--all", "-n", ns)
	status := func(path string) int { c, _ := r.get(path); return c }
	within(t, "ready", 30*time.Second, func() bool { return status("/readyz") == http.StatusOK })

	cut := time.Now()
	r.Proxy.Blackhole()
	var unready time.Duration
	for time.Since(cut) < healthCut {
		if c := status("/readyz"); c != http.StatusOK && unready == 0 {
			unready = time.Since(cut)
			t.Logf("/readyz %d after %v of silence", c, unready.Round(time.Millisecond))
		}
		if c := status("/healthz"); c != http.StatusOK {
			t.Errorf("/healthz %d after %v of silence, before %v", c, time.Since(cut).Round(time.Millisecond), healthSilence)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	switch {
	case unready == 0:
		t.Errorf("/readyz stayed 200 through %v of silence, want non-200 within %v", healthCut, readySilence+time.Second)
	case unready > readySilence+time.Second:
		t.Errorf("/readyz turned non-200 after %v of silence, want within %v", unready, readySilence+time.Second)
	}
	r.Proxy.Pass()
	within(t, "/readyz after the heal", 10*time.Second, func() bool { return status("/readyz") == http.StatusOK })
}

// daemonBound reads a duration constant of pkg/daemon (N * time.Second or
// N * time.Millisecond) from its source, so that the test holds the loop
// to the bound it states, whatever it becomes.
func daemonBound(t testing.TB, name string) time.Duration {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(), "pkg", "daemon", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if expr := constExpr(f, name); expr != nil {
			if d, ok := durationOf(expr); ok {
				return d
			}
			t.Fatalf("pkg/daemon's %s is not N * time.Second: read it by hand", name)
		}
	}
	t.Fatalf("pkg/daemon declares no constant %s", name)
	return 0
}

// constExpr is the value of the file's constant name, nil if none.
func constExpr(f *ast.File, name string) ast.Expr {
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name == name && i < len(vs.Values) {
					return vs.Values[i]
				}
			}
		}
	}
	return nil
}

// durationOf evaluates N * time.Second or N * time.Millisecond.
func durationOf(expr ast.Expr) (time.Duration, bool) {
	units := map[string]time.Duration{"Second": time.Second, "Millisecond": time.Millisecond}
	be, ok := expr.(*ast.BinaryExpr)
	if !ok || be.Op != token.MUL {
		return 0, false
	}
	lit, okL := be.X.(*ast.BasicLit)
	sel, okS := be.Y.(*ast.SelectorExpr)
	if !okL || !okS || lit.Kind != token.INT || units[sel.Sel.Name] == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(lit.Value)
	return time.Duration(n) * units[sel.Sel.Name], err == nil
}
