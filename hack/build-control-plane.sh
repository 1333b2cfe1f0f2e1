#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-controller-manager and kubectl from the Go module proxy,
# at the versions pinned in test/go.mod, into a cache folder outside the repository.
# Prints the folder holding the binaries on its last line.
#
# The folder is keyed by the modules linked into the four binaries, not by test/go.sum:
# a test that adds a dependency changes go.sum but rarely what the control plane is built
# from, and should not cost a rebuild. Working that key out takes a few seconds, so a
# warm run first looks up go.mod+go.sum in an index and exits at once when it matches.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/hack/build-control-plane.sh"
k8s_version=$(awk '$1=="k8s.io/kubernetes" && NF>=2{print $2}' "$root/test/go.mod" | head -n1)
etcd_version=$(awk '$1=="go.etcd.io/etcd/server/v3" && NF>=2{print $2}' "$root/test/go.mod" | head -n1)
cache=${KUBECTL_SLICES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-slices}
mains="k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl go.etcd.io/etcd/server/v3"

sum_key=$(cat "$root/test/go.mod" "$root/test/go.sum" "$self" | sha256sum | cut -c1-16)
index="$cache/index/$sum_key"
if [ -f "$index" ] && [ -f "$(cat "$index")/.complete" ]; then
  cat "$index"
  exit 0
fi

cd "$root/test"
mod_key=$( { cat "$self"; CGO_ENABLED=0 go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' $mains | sort -u; } \
  | sha256sum | cut -c1-16)
bin="$cache/control-plane-$k8s_version-$mod_key"
if [ ! -f "$bin/.complete" ]; then
  rm -rf "$bin"
  mkdir -p "$bin"
  minor=$(echo "$k8s_version" | cut -d. -f2)
  pkg=k8s.io/component-base/version
  ldflags="-s -w -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor \
   -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z \
   -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version -X k8s.io/client-go/pkg/version.gitMajor=1 \
   -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  echo "building kube-apiserver, kube-controller-manager, kubectl $k8s_version and etcd $etcd_version into $bin" >&2
  start=$(date +%s)
  # One go build for all four so shared packages compile once; -p stays at the default (cores).
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$bin/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
  touch "$bin/.complete"
  echo "built in $(( $(date +%s) - start ))s" >&2
  # Drop builds from other module sets: each is ~300 MB.
  for old in "$cache"/control-plane-*; do
    [ "$old" = "$bin" ] || rm -rf "$old"
  done
fi
mkdir -p "$cache/index"
echo "$bin" > "$index"
echo "$bin"
