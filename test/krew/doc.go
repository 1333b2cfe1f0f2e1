// Package krew proves the plugin's krew manifest without krew, whose module
// is not on the Go module proxy: it holds faithful copies of krew's manifest
// types (sigs.k8s.io/krew/pkg/index), the checks of krew's validator
// (pkg/index/validation) and of the krew-index review (overlapping
// platform selectors, a short shortDescription, every archive holding its
// bin and files and hashing to its sha256), and what `kubectl krew install
// --manifest --archive` does: verify the checksum, extract, apply files into
// the store and link bin onto PATH. That plugin.yaml is krew/.krew.yaml
// rendered is checked beside the renderer, in hack/dist.
package krew
