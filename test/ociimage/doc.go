// Package ociimage writes single-layer OCI image archives (an OCI image
// layout in a tar, as `ctr images import` reads it) from files on disk, so
// that a test node can run images built here from static binaries: no
// registry, no Docker, nothing pulled.
package ociimage
