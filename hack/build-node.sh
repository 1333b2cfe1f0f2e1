#!/usr/bin/env bash
# Builds what a real test node needs from the Go module proxy into a cache folder outside the
# repository, and prints that folder on its last line:
#   kubelet, kube-proxy            k8s.io/kubernetes/cmd/{kubelet,kube-proxy} at the version pinned in test/go.mod
#   containerd, containerd-shim-runc-v2, ctr   github.com/containerd/containerd/v2 at $containerd_version
#
# Kept apart from build-control-plane.sh so that the control plane's cache key never moves
# with the node's. runc and the CNI plugins come from the distribution (Debian: runc,
# containernetworking-plugins); kubelet 1.36 needs containerd 2.x, newer than Debian ships.
# Not part of make test: make e2e-node runs it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/hack/build-node.sh"
k8s_version=$(awk '$1=="k8s.io/kubernetes" && NF>=2{print $2}' "$root/test/go.mod" | head -n1)
containerd_version=v2.2.9
cache=${KUBECTL_SLICES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-slices}

# The folder is keyed by the modules linked into the kubelet and kube-proxy (as build-control-plane.sh
# keys its own): a test that adds a dependency changes test/go.sum, rarely the kubelet.
# A warm run looks go.mod+go.sum up in an index first and exits at once.
sum_key=$(cat "$self" "$root/test/go.mod" "$root/test/go.sum" | sha256sum | cut -c1-16)
index="$cache/index/node-$sum_key"
if [ -f "$index" ] && [ -f "$(cat "$index")/.complete" ]; then
  cat "$index"
  exit 0
fi
mod_key=$( { cat "$self"; cd "$root/test" && CGO_ENABLED=0 go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' \
  k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy | sort -u; } | sha256sum | cut -c1-16)
bin="$cache/node-$k8s_version-containerd-$containerd_version-$mod_key"
if [ -f "$bin/.complete" ]; then
  mkdir -p "$cache/index"
  echo "$bin" > "$index"
  echo "$bin"
  exit 0
fi
rm -rf "$bin"
mkdir -p "$bin"
start=$(date +%s)
minor=$(echo "$k8s_version" | cut -d. -f2)
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor \
 -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
echo "building kubelet and kube-proxy $k8s_version and containerd $containerd_version into $bin" >&2
(cd "$root/test" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/kubelet" k8s.io/kubernetes/cmd/kubelet)
# kube-proxy runs in an image (test/e2enode), static like the kubelet: the
# image carries Debian's nft and iptables for it, not a libc for it.
proxy_start=$(date +%s)
(cd "$root/test" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/kube-proxy" k8s.io/kubernetes/cmd/kube-proxy)
echo "kube-proxy built in $(( $(date +%s) - proxy_start ))s" >&2
# go install pkg@version builds from containerd's own go.mod (it has no replace directives).
# Without cgo and with the graph drivers we do not use left out: overlayfs and native
# snapshotters stay, btrfs and devmapper go.
cver="github.com/containerd/containerd/v2/version"
GOBIN="$bin" CGO_ENABLED=0 go install -trimpath -tags "no_btrfs no_devmapper no_zfs no_aufs" \
  -ldflags "-s -w -X $cver.Version=$containerd_version -X $cver.Package=github.com/containerd/containerd/v2" \
  "github.com/containerd/containerd/v2/cmd/containerd@$containerd_version" \
  "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@$containerd_version" \
  "github.com/containerd/containerd/v2/cmd/ctr@$containerd_version"
touch "$bin/.complete"
echo "built in $(( $(date +%s) - start ))s" >&2
# Drop builds from other module sets.
for old in "$cache"/node-*; do
  [ "$old" = "$bin" ] || rm -rf "$old"
done
mkdir -p "$cache/index"
echo "$bin" > "$index"
echo "$bin"
