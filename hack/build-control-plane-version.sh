#!/usr/bin/env bash
# Usage: hack/build-control-plane-version.sh v1.31.14
#
# Builds kube-apiserver and kube-controller-manager of one Kubernetes release from the
# Go module proxy into the user cache, for `make compat`. etcd and kubectl are the ones
# hack/build-control-plane.sh builds from test/go.mod (hard-linked beside them): etcd's
# storage API is stable across these releases, and kubectl is the client under test.
# Prints the folder holding the four binaries on its last line.
#
# k8s.io/kubernetes replaces its staging modules (k8s.io/api, k8s.io/client-go, ...)
# with local folders, which a dependant cannot see; so a throwaway module in the cache
# pins each of them to the matching v0.<minor>.<patch> tag, as test/go.mod does for the
# current release, and builds there.
set -euo pipefail
version=${1:?usage: $0 v1.MINOR.PATCH}
case "$version" in v1.[0-9]*.[0-9]*) ;; *) echo "not a Kubernetes release: $version (want v1.MINOR.PATCH)" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/hack/build-control-plane-version.sh"
cache=${KUBECTL_SLICES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-slices}
current=$("$root/hack/build-control-plane.sh" | tail -n 1)
bin="$cache/compat/$version"
link() {
  for b in etcd kubectl; do
    ln -f "$current/$b" "$bin/$b" 2>/dev/null || cp "$current/$b" "$bin/$b"
  done
}
# A build is keyed by this script; etcd and kubectl are linked afresh on every run.
key=$(sha256sum < "$self" | cut -c1-16)
if [ -f "$bin/.complete" ] && [ "$(cat "$bin/.complete")" = "$key" ]; then
  link
  echo "$bin"
  exit 0
fi

staging=${version/#v1./v0.}
minor=$(echo "$version" | cut -d. -f2)
mod="$cache/compat/mod-$version"
rm -rf "$bin" "$mod"
mkdir -p "$bin" "$mod"
gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
[ -f "$gomod" ] || { echo "k8s.io/kubernetes@$version: not on the module proxy" >&2; exit 1; }
{
  echo "module compat.local/control-plane"
  echo
  echo "go $(go env GOVERSION | sed 's/^go//; s/^\([0-9]*\.[0-9]*\).*/\1/').0"
  echo
  echo "require k8s.io/kubernetes $version"
  echo
  # Every staging module the release replaces locally, pinned to its published tag. The
  # proxy serves every tag's go.mod but lacks a few tags' sources (k8s.io/endpointslice
  # v0.31.14, for one): those take the newest earlier patch of the same minor that it
  # serves, and pins.txt beside the binaries says which. A module with no such patch keeps
  # its tag: the build needs its sources only if the two binaries link it.
  for m in $(awk '$2=="=>" && $3 ~ /^\.\/staging\// {print $1}' "$gomod"); do
    pin=$staging
    if ! (cd "$cache/compat" && go mod download "$m@$staging") 2>/dev/null; then
      for v in $( (cd "$cache/compat" && go list -m -versions "$m") | tr ' ' '\n' | grep -E "^${staging%.*}\.[0-9]+$" \
          | sort -t. -k3,3nr | awk -F. -v p="${staging##*.}" '$3 < p'); do
        if (cd "$cache/compat" && go mod download "$m@$v") 2>/dev/null; then
          pin=$v
          echo "$m $pin ($staging is not on the module proxy)" >> "$bin/pins.txt"
          echo "$m: $staging is not on the module proxy; using $pin" >&2
          break
        fi
      done
    fi
    echo "replace $m => $m $pin"
  done
} > "$mod/go.mod"

pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor \
 -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
echo "building kube-apiserver and kube-controller-manager $version into $bin" >&2
start=$(date +%s)
cd "$mod"
# -mod=mod fills in go.sum and the release's own requirements (minimal version selection
# keeps them at the release's versions: nothing else is required here).
CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "$ldflags" -o "$bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
link
echo "$key" > "$bin/.complete"
echo "built $version in $(( $(date +%s) - start ))s" >&2
echo "$bin"
