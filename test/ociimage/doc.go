// Package ociimage writes single-layer OCI image archives (an OCI image
// layout in a tar, as `ctr images import` reads it) from files on disk and
// symlinks, so that a test node can run images built here: static binaries,
// or a distribution's dynamic ones with the shared libraries Libraries
// resolves for them through the host's ldd. No registry, no Docker,
// nothing pulled.
package ociimage
