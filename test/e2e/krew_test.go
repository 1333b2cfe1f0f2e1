package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/test/krew"
)

// plugin.yaml installs as `kubectl krew install --manifest=plugin.yaml
// --archive=...` would install it, and the installed plugin runs through a
// real kubectl from krew's bin directory. The archive is the host's from
// `make dist` when dist/ holds one for plugin.yaml's version (its sha256
// must then be plugin.yaml's); otherwise the host archive is built now with
// hack/dist, and plugin.yaml's entry for the host takes its checksum (a
// committed plugin.yaml can never carry the checksum of a build of its own
// commit, which embeds the commit).
func TestKrewInstall(t *testing.T) {
	manifest, err := os.ReadFile(filepath.Join(repoRoot(), "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := krew.Decode(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := krew.ValidatePlugin("slices", p); err != nil {
		t.Fatal(err)
	}
	pl, ok, err := krew.Match(p, runtime.GOOS, runtime.GOARCH)
	if err != nil || !ok {
		t.Fatalf("no platform for %s/%s: %v", runtime.GOOS, runtime.GOARCH, err)
	}
	archive := filepath.Join(repoRoot(), "dist", filepath.Base(pl.URI))
	wantCommit := ""
	if _, err := os.Stat(archive); err != nil {
		archive, wantCommit = buildHostArchive(t, p.Spec.Version, filepath.Base(pl.URI))
		data, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		for i := range p.Spec.Platforms {
			if p.Spec.Platforms[i].URI == pl.URI {
				p.Spec.Platforms[i].Sha256 = hex.EncodeToString(sum[:])
			}
		}
		t.Logf("no dist/%s: built it, %s", filepath.Base(pl.URI), hex.EncodeToString(sum[:]))
	}
	root := t.TempDir()
	link, err := krew.Install(root, p, archive, runtime.GOOS, runtime.GOARCH)
	if err != nil {
		t.Fatal(err)
	}

	path := filepath.Dir(link) + string(os.PathListSeparator) + shared.BinDir
	out := runWithPath(t, path, "slices", "version")
	want := regexp.MustCompile(`^Client Version: ` + regexp.QuoteMeta(p.Spec.Version) + `
Git Commit: ([0-9a-f]{40})
Commit Date: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ
Server Version: v1\.36\.3
$`)
	m := want.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("kubectl slices version from the krew install:\n%s", out)
	}
	if wantCommit != "" && m[1] != wantCommit {
		t.Errorf("commit %s, want HEAD %s", m[1], wantCommit)
	}
	if out := runWithPath(t, path, "plugin", "list"); !strings.Contains(out, link) {
		t.Errorf("kubectl plugin list does not find %s:\n%s", link, out)
	}
}

// buildHostArchive runs hack/dist for the host platform only.
func buildHostArchive(t *testing.T, version, name string) (archive, commit string) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "./hack/dist", "-out", out, "-manifest", "",
		"-platforms", runtime.GOOS+"/"+runtime.GOARCH, "-version", version)
	cmd.Dir = repoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/dist: %v\n%s", err, b)
	}
	head, err := exec.Command("git", "-C", repoRoot(), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(out, name), strings.TrimSpace(string(head))
}

// runWithPath runs kubectl from PATH (not the harness's plugin directory)
// against the shared cluster.
func runWithPath(t *testing.T, path string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kubectl", args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+shared.Kubeconfig, "PATH="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// exec resolves "kubectl" with the parent's PATH: use the harness's.
	cmd.Path = filepath.Join(shared.BinDir, "kubectl")
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
