package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// entry is one file of an archive.
type entry struct {
	name string
	mode os.FileMode
	data []byte
}

// archive packs the binary and the license for one platform:
// kubectl-slices_VERSION_OS_ARCH.tar.gz, or .zip for windows.
func (o *options) archive(goos, goarch, bin string, license []byte) (string, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	// Sorted by name: LICENSE, then the binary.
	entries := []entry{{"LICENSE", 0o644, license}, {filepath.Base(bin), 0o755, data}}
	base := fmt.Sprintf("kubectl-slices_%s_%s_%s", o.version, goos, goarch)
	var buf bytes.Buffer
	if goos == "windows" {
		base += ".zip"
		err = writeZip(&buf, entries, o.date)
	} else {
		base += ".tar.gz"
		err = writeTarGz(&buf, entries, o.date)
	}
	if err != nil {
		return "", err
	}
	name := filepath.Join(o.out, base)
	return name, os.WriteFile(name, buf.Bytes(), 0o644)
}

// writeTarGz writes a ustar archive owned by root with every time set to
// mtime, gzipped with no file name and no time in the gzip header.
func writeTarGz(w io.Writer, entries []entry, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: e.name, Mode: int64(e.mode), Size: int64(len(e.data)),
			ModTime: mtime, Uid: 0, Gid: 0, Format: tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes a zip with fixed times and Unix modes (so the binary stays
// executable when unpacked by unzip).
func writeZip(w io.Writer, entries []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
	})
	for _, e := range entries {
		hdr := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		hdr.SetMode(e.mode)
		f, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
