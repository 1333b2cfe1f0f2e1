package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"
)

var testEntries = []entry{{"LICENSE", 0o644, []byte("license text\n")}, {"kubectl-slices", 0o755, bytes.Repeat([]byte("bin"), 1000)}}

// Two archives of the same files are the same bytes, whenever they are
// written, and carry the commit's time, root ownership and the modes.
func TestArchivesAreReproducible(t *testing.T) {
	mtime := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	for name, write := range map[string]func(io.Writer, []entry, time.Time) error{"tar.gz": writeTarGz, "zip": writeZip} {
		var a, b bytes.Buffer
		if err := write(&a, testEntries, mtime); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1100 * time.Millisecond) // a time leaking in would differ
		if err := write(&b, testEntries, mtime); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two runs differ", name)
		}
	}
	var buf bytes.Buffer
	if err := writeTarGz(&buf, testEntries, mtime); err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header carries name %q, time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for i := 0; ; i++ {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e := testEntries[i]
		if h.Name != e.name || h.Mode != int64(e.mode) || !h.ModTime.Equal(mtime) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Typeflag != tar.TypeReg {
			t.Errorf("tar entry %d: %+v", i, h)
		}
	}
	buf.Reset()
	if err := writeZip(&buf, testEntries, mtime); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range zr.File {
		if f.Name != testEntries[i].name || f.Mode() != testEntries[i].mode || !f.Modified.Equal(mtime) {
			t.Errorf("zip entry %d: %s %v %v", i, f.Name, f.Mode(), f.Modified)
		}
	}
}
