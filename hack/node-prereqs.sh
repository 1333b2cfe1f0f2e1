#!/usr/bin/env bash
# What the real node (make e2e-node) needs besides what hack/build-node.sh
# builds: root, and Debian's runc, CNI plugins, iptables, nftables, netbase
# and unshare (the kube-proxy image carries the host's nft and iptables with
# their libraries, and netbase's /etc/protocols, test/e2enode).
# Installs the packages when it can (root with apt-get); otherwise says what
# is missing and exits 1.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "the real node needs root" >&2
  exit 1
fi
missing=""
command -v runc >/dev/null || missing="$missing runc"
[ -x /usr/lib/cni/bridge ] || missing="$missing containernetworking-plugins"
command -v iptables >/dev/null || missing="$missing iptables"
command -v nft >/dev/null || missing="$missing nftables"
[ -f /etc/protocols ] || missing="$missing netbase"
command -v unshare >/dev/null || missing="$missing util-linux"
[ -z "$missing" ] && exit 0
if command -v apt-get >/dev/null; then
  # shellcheck disable=SC2086 # one word per package
  apt-get install -y -qq $missing >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $missing >/dev/null 2>&1; } \
    && exit 0
fi
echo "the real node needs the Debian packages:$missing" >&2
exit 1
