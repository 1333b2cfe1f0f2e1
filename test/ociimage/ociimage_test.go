package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteLayout reads an archive back as an importer would: index.json
// names the image, every descriptor's digest and size match its blob, the
// config's diff_id is the uncompressed layer's digest, and the layer holds
// the file, executable, under its parents. The same input gives the same
// bytes.
func TestWriteLayout(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	img := Image{Name: "localhost/tool:v1", Files: map[string]string{"/usr/local/bin/tool": bin},
		Entrypoint: []string{"tool"}, User: "65532:65532", Env: []string{"PATH=/usr/local/bin"}}
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	if err := Write(a, img); err != nil {
		t.Fatal(err)
	}
	if err := Write(b, img); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Fatal("two writes of the same image differ")
	}

	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(ab))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	blob := func(d descriptorJSON) []byte {
		t.Helper()
		data, ok := files["blobs/sha256/"+d.Digest[len("sha256:"):]]
		if !ok || len(data) != d.Size || "sha256:"+hexSum(data) != d.Digest {
			t.Fatalf("blob %s: present %v, %d bytes, want %d", d.Digest, ok, len(data), d.Size)
		}
		return data
	}
	var index struct {
		Manifests []struct {
			descriptorJSON
			Annotations map[string]string
		}
	}
	mustJSON(t, files["index.json"], &index)
	if len(index.Manifests) != 1 || index.Manifests[0].Annotations["io.containerd.image.name"] != "localhost/tool:v1" ||
		index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v1" {
		t.Fatalf("index.json: %s", files["index.json"])
	}
	var manifest struct {
		Config descriptorJSON
		Layers []descriptorJSON
	}
	mustJSON(t, blob(index.Manifests[0].descriptorJSON), &manifest)
	var config struct {
		Config struct {
			Entrypoint []string
			User       string
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	mustJSON(t, blob(manifest.Config), &config)
	if len(manifest.Layers) != 1 || config.Config.User != "65532:65532" || len(config.Config.Entrypoint) != 1 {
		t.Fatalf("manifest %+v, config %+v", manifest, config)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	if len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != "sha256:"+hexSum(raw) {
		t.Fatalf("diff_ids %v, layer digest sha256:%s", config.RootFS.DiffIDs, hexSum(raw))
	}
	modes := map[string]int64{}
	lr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		modes[h.Name] = h.Mode
	}
	for name, mode := range map[string]int64{"usr/": 0o755, "usr/local/": 0o755, "usr/local/bin/": 0o755, "usr/local/bin/tool": 0o755, "tmp/": 0o1777} {
		if modes[name] != mode {
			t.Errorf("layer entry %s: mode %o, want %o (entries %v)", name, modes[name], mode, modes)
		}
	}
}

type descriptorJSON struct {
	Digest string
	Size   int
}

func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestSymlinks: a symlink is written as one, with its target as given, its
// parents made; a path both a file and a symlink is refused.
func TestSymlinks(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "multi")
	if err := os.WriteFile(bin, []byte("#!multi"), 0o600); err != nil {
		t.Fatal(err)
	}
	img := Image{Name: "localhost/multi:v1", Files: map[string]string{"/usr/sbin/multi": bin},
		Symlinks: map[string]string{"/usr/sbin/tool": "multi", "/bin/sh": "/usr/bin/dash"}}
	raw, _, err := layerTar(img.Files, img.Symlinks)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]*tar.Header{}
	lr := tar.NewReader(zr)
	for {
		h, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = h
	}
	for name, target := range map[string]string{"usr/sbin/tool": "multi", "bin/sh": "/usr/bin/dash"} {
		if h := entries[name]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != target {
			t.Errorf("entry %s: %+v, want a symlink to %s", name, h, target)
		}
	}
	if h := entries["bin/"]; h == nil || h.Typeflag != tar.TypeDir {
		t.Errorf("no directory bin/ for the symlink bin/sh: %+v", h)
	}
	img.Symlinks["/usr/sbin/multi"] = "tool"
	if _, _, err := layerTar(img.Files, img.Symlinks); err == nil {
		t.Error("a path both a file and a symlink was accepted")
	}
}

// TestParseLdd: ldd's library and loader lines give their paths, the vDSO
// none, and a library not found is an error naming it.
func TestParseLdd(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ff654bfa000)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007ff6548eb000)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007ff654bfc000)\n"
	libs := map[string]string{}
	if err := parseLdd("nft", out, libs); err != nil {
		t.Fatal(err)
	}
	if len(libs) != 2 || libs["/lib/x86_64-linux-gnu/libc.so.6"] == "" || libs["/lib64/ld-linux-x86-64.so.2"] == "" {
		t.Fatalf("libraries %v", libs)
	}
	err := parseLdd("nft", "\tlibgone.so.1 => not found\n", map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "libgone.so.1") {
		t.Fatalf("a missing library: %v", err)
	}
}
