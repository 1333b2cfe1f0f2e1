#!/usr/bin/env bash
# Usage: hack/compat.sh [v1.MINOR.PATCH ...]
#
# Runs the e2e compatibility scenarios (COMPAT_TESTS, a go test -run expression) against
# kube-apiserver and kube-controller-manager of each release named, one release at a
# time, and prints a table: release, result, passed/failed/skipped tests, seconds. Each
# release's binaries are built once into the user cache (hack/build-control-plane-version.sh);
# the release test/go.mod pins is the regular control plane. Logs go to COMPAT_LOGS.
# Exits 1 if any release fails or cannot be built.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${COMPAT_LOGS:-${TMPDIR:-/tmp}/kubectl-slices-compat}
tests=${COMPAT_TESTS:?COMPAT_TESTS: the go test -run expression of the scenarios}
current=$(awk '$1=="k8s.io/kubernetes" && NF>=2{print $2}' "$root/test/go.mod" | head -n1)
mkdir -p "$logs"
summary=()
status=0
for v in "$@"; do
  start=$(date +%s)
  if [ "$v" = "$current" ]; then
    dir=$("$root/hack/build-control-plane.sh" 2>"$logs/$v.build.log" | tail -n 1)
  else
    dir=$("$root/hack/build-control-plane-version.sh" "$v" 2>"$logs/$v.build.log" | tail -n 1)
  fi
  if [ -z "$dir" ] || [ ! -x "$dir/kube-apiserver" ]; then
    echo "$v: build failed, see $logs/$v.build.log" >&2
    tail -n 5 "$logs/$v.build.log" >&2
    summary+=("$(printf '%-9s %-6s %s' "$v" BUILD "$(( $(date +%s) - start ))s (build failed)")")
    status=1
    continue
  fi
  built=$(( $(date +%s) - start ))
  echo "== $v: $dir" >&2
  # A private TMPDIR: the clusters' data folders go there, so leftovers are told apart
  # from other runs sharing the binaries.
  tmp="$logs/$v.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$root/test" && TMPDIR="$tmp" KUBECTL_SLICES_BIN_DIR="$dir" go test ./e2e -run "$tests" -count=1 -timeout 60m -v) > "$logs/$v.log" 2>&1
  rc=$?
  took=$(( $(date +%s) - start - built ))
  passed=$(grep -c '^--- PASS' "$logs/$v.log")
  failed=$(grep -c '^--- FAIL' "$logs/$v.log")
  skipped=$(grep -c '^--- SKIP' "$logs/$v.log")
  result=ok
  if [ "$rc" != 0 ]; then
    result=FAIL
    status=1
    grep -E '^(--- FAIL|\s+--- FAIL|FAIL|panic)' "$logs/$v.log" >&2
  fi
  summary+=("$(printf '%-9s %-6s %3d passed %2d failed %2d skipped  tests %4ds  build %4ds' \
    "$v" "$result" "$passed" "$failed" "$skipped" "$took" "$built")")
  # Nothing a run started may outlive it.
  if pgrep -f "$tmp/" >/dev/null; then
    echo "$v: processes left behind:" >&2
    pgrep -af "$tmp/" >&2
    status=1
  fi
  rm -rf "$tmp"
done
echo "logs: $logs"
printf '%s\n' "${summary[@]}"
exit $status
