// Command dist builds the release artefacts of kubectl-slices: one binary per
// platform (CGO off, -trimpath, version, commit and commit date through
// ldflags), an archive per platform (.tar.gz, .zip for windows) holding the
// binary and LICENSE, checksums.txt, and plugin.yaml rendered from the
// krew-release-bot template krew/.krew.yaml with the archives' checksums.
//
// Everything is reproducible: the date is the commit's, archive entries are
// sorted with fixed times, owners and modes, and gzip carries no name or
// time, so two runs from one commit give byte-identical archives.
//
//	go run ./hack/dist [-out dist] [-platforms linux/amd64,...] [-version vX.Y.Z] [-manifest plugin.yaml]
package main
