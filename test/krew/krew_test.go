package krew

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func repoFile(t *testing.T, name string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func repoManifest(t *testing.T) Plugin {
	t.Helper()
	p, err := Decode(repoFile(t, "plugin.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// plugin.yaml passes krew's validator and the krew-index review, and
// offers exactly the release platforms.
func TestRepositoryManifest(t *testing.T) {
	p := repoManifest(t)
	if err := ValidatePlugin("slices", p); err != nil {
		t.Fatal(err)
	}
	if err := Review(p); err != nil {
		t.Fatal(err)
	}
	for _, goos := range []string{"darwin", "linux", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			pl, ok, err := Match(p, goos, arch)
			if err != nil || !ok {
				t.Fatalf("%s/%s: no platform (%v)", goos, arch, err)
			}
			ext, bin := ".tar.gz", "kubectl-slices"
			if goos == "windows" {
				ext, bin = ".zip", "kubectl-slices.exe"
			}
			if want := fmt.Sprintf("/%s/kubectl-slices_%s_%s_%s%s", p.Spec.Version, p.Spec.Version, goos, arch, ext); !strings.HasSuffix(pl.URI, want) {
				t.Errorf("%s/%s: uri %s, want ...%s", goos, arch, pl.URI, want)
			}
			if pl.Bin != bin {
				t.Errorf("%s/%s: bin %s, want %s", goos, arch, pl.Bin, bin)
			}
		}
	}
	if len(p.Spec.Platforms) != 6 {
		t.Errorf("%d platforms, want 6", len(p.Spec.Platforms))
	}
	for _, want := range []string{"kubectl_complete-slices", "RBAC", "endpointslices", "nodes"} {
		if !strings.Contains(p.Spec.Caveats, want) {
			t.Errorf("caveats do not mention %s", want)
		}
	}
}

// After `make dist`, every archive hashes to its sha256 in plugin.yaml and
// installs as krew installs it: bin and LICENSE in place.
func TestManifestMatchesDist(t *testing.T) {
	p := repoManifest(t)
	_, file, _, _ := runtime.Caller(0)
	dist := filepath.Join(filepath.Dir(file), "..", "..", "dist")
	for _, pl := range p.Spec.Platforms {
		archive := filepath.Join(dist, filepath.Base(pl.URI))
		if _, err := os.Stat(archive); err != nil {
			t.Skipf("dist/ has no %s: run make dist to check plugin.yaml's checksums (e2e TestKrewInstall checks a host build)", filepath.Base(pl.URI))
		}
		goos, goarch := pl.Selector.MatchLabels["os"], pl.Selector.MatchLabels["arch"]
		link, err := Install(t.TempDir(), p, archive, goos, goarch)
		if err != nil {
			t.Fatalf("%s/%s: %v", goos, goarch, err)
		}
		license, err := os.ReadFile(filepath.Join(filepath.Dir(mustEval(t, link)), "LICENSE"))
		if err != nil || !bytes.Equal(license, repoFile(t, "LICENSE")) {
			t.Errorf("%s/%s: LICENSE not installed or not the repository's: %v", goos, goarch, err)
		}
	}
}

func mustEval(t *testing.T, link string) string {
	t.Helper()
	target, err := filepath.EvalSymlinks(link)
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// Each rule rejects the manifest that breaks it.
func TestRulesReject(t *testing.T) {
	good := string(repoFile(t, "plugin.yaml"))
	first := repoManifest(t).Spec.Platforms[0]
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown field", "  homepage:", "  homepages:", "unknown field"},
		{"name", "name: slices", "name: Slices!", "does not match the file name"},
		{"version without v", "version: v", "version: ", "does not start with 'v'"},
		{"version not semver", "version: v", "version: v1.2-", "failed to parse version"},
		{"short description", "shortDescription: ", "shortDescription: A description that is far longer than fifty chars ", "at most 50"},
		{"description width", "  description: |\n", "  description: |\n    " + strings.Repeat("x", 81) + "\n", "wrap at 80"},
		{"selector key", "        os: darwin\n", "        os: darwin\n        distro: any\n", "not supported in selector"},
		{"overlap", "        os: darwin\n        arch: arm64\n", "        os: darwin\n        arch: amd64\n", "overlapping platform selectors"},
		{"sha256", "sha256: " + first.Sha256, "sha256: " + strings.ToUpper(first.Sha256), "is not valid"},
		{"bin", "    bin: kubectl-slices\n", "    bin: \"\"\n", "`bin` has to be set"},
		{"license", "    - from: LICENSE\n      to: .\n", "", "LICENSE"},
		{"bin not installed", "    - from: kubectl-slices\n      to: .\n", "    - from: kubectl-slices\n      to: sub\n", "no files entry installs bin"},
		{"uri version", "releases/download/", "releases/download/v9/", ""},
	}
	for _, c := range cases {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Fatalf("%s: %q not in plugin.yaml", c.name, c.old)
		}
		if c.name == "uri version" {
			// the archive name, not the path, must carry the version
			bad = strings.Replace(good, "kubectl-slices_"+repoManifest(t).Spec.Version+"_darwin_amd64", "kubectl-slices_darwin_amd64", 1)
			c.want = "not named for version"
		}
		err := check(bad)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func check(manifest string) error {
	p, err := Decode([]byte(manifest))
	if err != nil {
		return err
	}
	if err := ValidatePlugin("slices", p); err != nil {
		return err
	}
	return Review(p)
}

// Install refuses what krew refuses: a wrong checksum, an archive without
// the bin, entries that are not files, paths leaving the archive.
func TestInstallRejects(t *testing.T) {
	type file struct {
		name string
		typ  byte
		body string
	}
	tgz := func(files ...file) []byte {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, f := range files {
			_ = tw.WriteHeader(&tar.Header{Name: f.name, Typeflag: f.typ, Mode: 0o755, Size: int64(len(f.body)), Linkname: "x"})
			_, _ = tw.Write([]byte(f.body))
		}
		tw.Close()
		gz.Close()
		return buf.Bytes()
	}
	good := []file{{"LICENSE", tar.TypeReg, "license"}, {"kubectl-slices", tar.TypeReg, "#!/bin/sh\n"}}
	cases := []struct {
		name    string
		archive []byte
		sha     string
		want    string
	}{
		{"good", tgz(good...), "", ""},
		{"checksum", tgz(good...), strings.Repeat("0", 64), "checksum does not match"},
		{"no bin", tgz(good[0]), "", `matches "kubectl-slices"`},
		{"symlink", tgz(append(good, file{"link", tar.TypeSymlink, ""})...), "", "unable to handle file type"},
		{"escape", tgz(append(good, file{"../evil", tar.TypeReg, "x"})...), "", "outside the target"},
		{"not an archive", []byte("plain text"), "", "not a supported archive format"},
	}
	for _, c := range cases {
		root := t.TempDir()
		archive := filepath.Join(root, "a.tar.gz")
		if err := os.WriteFile(archive, c.archive, 0o644); err != nil {
			t.Fatal(err)
		}
		p := repoManifest(t)
		sum := sha256.Sum256(c.archive)
		for i := range p.Spec.Platforms {
			p.Spec.Platforms[i].Sha256 = hex.EncodeToString(sum[:])
			if c.sha != "" {
				p.Spec.Platforms[i].Sha256 = c.sha
			}
		}
		link, err := Install(root, p, archive, "linux", "amd64")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "":
			if target := mustEval(t, link); filepath.Base(link) != "kubectl-slices" || !strings.HasPrefix(target, filepath.Join(mustEval(t, root), "store", "slices", p.Spec.Version)) {
				t.Errorf("%s: link %s -> %s", c.name, link, target)
			}
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
