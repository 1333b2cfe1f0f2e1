#!/usr/bin/env bash
# Builds CoreDNS from its Go module (github.com/coredns/coredns at $coredns_version) into a
# cache folder outside the repository, and prints that folder on its last line; the binary is
# "coredns" in it. The e2e test of the DNS reader (make e2e-dns) runs it as a local process.
#
# It is built in a scratch module of its own under the cache, from CoreDNS's own go.mod, so
# that its dependencies (a newer client-go among them) never reach test/go.mod or the control
# plane's build. Its main is generated here: coremain and only the plugins a kubeadm Corefile
# names (errors, health, ready, kubernetes, prometheus, forward, cache, loop, reload,
# loadbalance) and bind (so that a test's CoreDNS listens on loopback only), with dnsserver.Directives cut to them in CoreDNS's order. CoreDNS's own way
# is plugin.cfg and go generate over its whole tree; importing its core/plugin would link all
# ~60 plugins (the cloud ones pull the AWS, Azure and Google SDKs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/hack/build-coredns.sh"
coredns_version=v1.15.0
cache=${KUBECTL_SLICES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-slices}

# The key is this script (version, plugin list, main) and the Go version: nothing in the
# repository's modules goes into the build. A warm run finds the index and exits at once.
key=$( { cat "$self"; go env GOVERSION; } | sha256sum | cut -c1-16)
index="$cache/index/coredns-$key"
if [ -f "$index" ] && [ -f "$(cat "$index")/.complete" ]; then
  cat "$index"
  exit 0
fi
bin="$cache/coredns-$coredns_version-$key"
if [ ! -f "$bin/.complete" ]; then
  rm -rf "$bin"
  mkdir -p "$bin/src"
  start=$(date +%s)
  echo "building coredns $coredns_version into $bin" >&2
  cd "$bin/src"
  cat > main.go <<'EOF'
// Command coredns is CoreDNS with the plugins of a kubeadm Corefile only.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func init() {
	// The order is plugin.cfg's: it decides which plugin sees a query first.
	keep := map[string]bool{"bind": true, "reload": true, "ready": true, "health": true, "prometheus": true,
		"errors": true, "loadbalance": true, "cache": true, "kubernetes": true, "loop": true, "forward": true}
	var d []string
	for _, n := range dnsserver.Directives {
		if keep[n] {
			d = append(d, n)
		}
	}
	dnsserver.Directives = d
}

func main() { coremain.Run() }
EOF
  # CoreDNS's go.mod is the scratch module's, so every dependency is at CoreDNS's own version.
  go mod download "github.com/coredns/coredns@$coredns_version"
  modfile="$(go env GOMODCACHE)/cache/download/github.com/coredns/coredns/@v/$coredns_version.mod"
  sed 's|^module .*|module kubectl-slices.local/coredns|' "$modfile" > go.mod
  printf 'require github.com/coredns/coredns %s\n' "$coredns_version" >> go.mod
  GOFLAGS=-mod=mod go mod tidy >&2
  CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$coredns_version" -o "$bin/coredns" .
  touch "$bin/.complete"
  echo "built in $(( $(date +%s) - start ))s, $(du -h "$bin/coredns" | cut -f1)" >&2
  for old in "$cache"/coredns-*; do
    [ "$old" = "$bin" ] || rm -rf "$old"
  done
fi
mkdir -p "$cache/index"
echo "$bin" > "$index"
echo "$bin"
