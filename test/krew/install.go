package krew

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// Install does what `kubectl krew install --manifest=M --archive=A` does,
// in the krew root dir: pick the platform for goos/goarch, verify the
// archive's sha256, extract it, apply the platform's files into
// store/NAME/VERSION, link bin as bin/kubectl-NAME, and write the receipt.
// It returns the link's path.
func Install(root string, p Plugin, archive, goos, goarch string) (string, error) {
	pl, ok, err := Match(p, goos, goarch)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("plugin %q does not offer installation for this platform (%s/%s)", p.Name, goos, goarch)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		return "", err
	}
	if err := VerifySha256(data, pl.Sha256); err != nil {
		return "", err
	}
	staging, err := os.MkdirTemp(root, "staging-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staging)
	if err := Extract(data, staging); err != nil {
		return "", fmt.Errorf("failed to unpack into staging dir: %w", err)
	}
	installDir := filepath.Join(root, "store", p.Name, p.Spec.Version)
	if err := ApplyFiles(staging, installDir, pl.Files); err != nil {
		return "", fmt.Errorf("failed to move files: %w", err)
	}
	bin := filepath.Join(installDir, filepath.FromSlash(pl.Bin))
	if !isSubPath(installDir, bin) {
		return "", fmt.Errorf("the bin %q is not inside the installation", pl.Bin)
	}
	if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("plugin %q: bin %q is not a file in the installation: %v", p.Name, pl.Bin, err)
	}
	link := filepath.Join(root, "bin", "kubectl-"+strings.ReplaceAll(p.Name, "-", "_"))
	if goos == "windows" {
		link += ".exe"
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(bin, link); err != nil {
		return "", fmt.Errorf("failed to link bin: %w", err)
	}
	receipt, err := yaml.Marshal(p)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(root, "receipts"), 0o755); err != nil {
		return "", err
	}
	return link, os.WriteFile(filepath.Join(root, "receipts", p.Name+".yaml"), receipt, 0o644)
}

// VerifySha256 is krew's download verifier.
func VerifySha256(data []byte, want string) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return fmt.Errorf("checksum does not match, want: %s, got %s", want, got)
	}
	return nil
}

// Extract unpacks a zip or a gzipped tar, told apart by content as krew
// does; entries other than files and directories, and paths leaving dir,
// are errors.
func Extract(data []byte, dir string) error {
	switch mime := http.DetectContentType(data); mime {
	case "application/zip":
		return extractZip(data, dir)
	case "application/x-gzip":
		return extractTarGz(data, dir)
	default:
		return fmt.Errorf("mime type %q for archive file is not a supported archive format", mime)
	}
}

func extractZip(data []byte, dir string) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err
	}
	for _, f := range zr.File {
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !isSubPath(dir, path) {
			return fmt.Errorf("archive contains path %q outside the target", f.Name)
		}
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
			continue
		}
		r, err := f.Open()
		if err != nil {
			return err
		}
		err = writeFile(path, r, f.Mode())
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func extractTarGz(data []byte, dir string) error {
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !isSubPath(dir, path) {
			return fmt.Errorf("archive contains path %q outside the target", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := writeFile(path, tr, os.FileMode(hdr.Mode)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unable to handle file type %d for %q in tar", hdr.Typeflag, hdr.Name)
		}
	}
}

func writeFile(path string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ApplyFiles is krew's file operations: each From is a glob in the
// archive, each To a directory of the installation that receives the
// matches under their base names. Nothing else of the archive is installed.
// No files means [{From: "*", To: "."}].
func ApplyFiles(from, to string, ops []FileOperation) error {
	if ops == nil {
		ops = []FileOperation{{From: "*", To: "."}}
	}
	for _, op := range ops {
		if op.To != filepath.Clean(op.To) {
			return fmt.Errorf("the provided path is not clean, %q should be %q", op.To, filepath.Clean(op.To))
		}
		matches, err := filepath.Glob(filepath.Join(from, filepath.FromSlash(op.From)))
		if err != nil {
			return err
		}
		if len(matches) == 0 {
			return fmt.Errorf("no file in the archive matches %q", op.From)
		}
		dst := filepath.Join(to, filepath.FromSlash(op.To))
		if !isSubPath(to, dst) {
			return fmt.Errorf("%q is outside the installation", op.To)
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		for _, m := range matches {
			if err := os.Rename(m, filepath.Join(dst, filepath.Base(m))); err != nil {
				return err
			}
		}
	}
	return nil
}

func isSubPath(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
