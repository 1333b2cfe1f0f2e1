package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// Image is what goes into one archive.
type Image struct {
	// Name is the full reference, e.g. localhost/kubectl-slices:e2e.
	Name string
	// Files maps a path in the image (e.g. /usr/local/bin/kubectl-slices)
	// to a file on disk; every file is written executable.
	Files map[string]string
	// Symlinks maps a path in the image (e.g. /usr/sbin/iptables) to its
	// target as the link holds it (e.g. xtables-nft-multi): a multi-call
	// binary tells its commands apart by the name it was run as.
	Symlinks   map[string]string
	Entrypoint []string
	// User is the image's default user, e.g. "65532:65532"; empty is root.
	User string
	Env  []string
}

// Write writes the archive to dst.
func Write(dst string, img Image) error {
	layer, diffID, err := layerTar(img.Files, img.Symlinks)
	if err != nil {
		return err
	}
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": img.Entrypoint, "User": img.User, "Env": img.Env},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": descriptor("application/vnd.oci.image.config.v1+json", config),
		"layers": []any{descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layer)},
	})
	if err != nil {
		return err
	}
	tag := img.Name[strings.LastIndex(img.Name, ":")+1:]
	md := descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
	md["annotations"] = map[string]string{"io.containerd.image.name": img.Name, "org.opencontainers.image.ref.name": tag}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{md}})
	if err != nil {
		return err
	}

	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	entries := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{"blobs/sha256/" + digestHex(config), config},
		{"blobs/sha256/" + digestHex(layer), layer},
		{"blobs/sha256/" + digestHex(manifest), manifest},
	}
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: int64(len(e.data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}

// layerTar returns the gzipped layer and the digest of its uncompressed
// tar (the config's diff_id). Directories are made for every parent; entries
// are sorted and dated at the epoch so the same files give the same digest.
func layerTar(files, symlinks map[string]string) ([]byte, string, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	dirs := map[string]bool{}
	var paths, links []string
	for p := range files {
		paths = append(paths, strings.TrimPrefix(path.Clean(p), "/"))
	}
	for p := range symlinks {
		if _, ok := files[p]; ok {
			return nil, "", fmt.Errorf("image path %s is both a file and a symlink", p)
		}
		links = append(links, strings.TrimPrefix(path.Clean(p), "/"))
	}
	for _, p := range append(append([]string(nil), paths...), links...) {
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dirList []string
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	sort.Strings(paths)
	sort.Strings(links)
	epoch := time.Unix(0, 0)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: epoch}); err != nil {
			return nil, "", err
		}
	}
	// /tmp, writable by anyone, as distroless has it.
	if err := tw.WriteHeader(&tar.Header{Name: "tmp/", Mode: 0o1777, Typeflag: tar.TypeDir, ModTime: epoch}); err != nil {
		return nil, "", err
	}
	for _, p := range paths {
		data, err := os.ReadFile(files["/"+p])
		if err != nil {
			return nil, "", fmt.Errorf("image file /%s: %w", p, err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: epoch}); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, "", err
		}
	}
	for _, p := range links {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o777, Linkname: symlinks["/"+p], Typeflag: tar.TypeSymlink, ModTime: epoch}); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + digestHex(raw.Bytes()), nil
}

func descriptor(mediaType string, data []byte) map[string]any {
	return map[string]any{"mediaType": mediaType, "digest": "sha256:" + digestHex(data), "size": len(data)}
}

func digestHex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
