#!/usr/bin/env bash
# tests/soak.sh - the whole suite N times in a row (default 5) with a CPU hog
# running beside it, as the flaky tests are found: a test that fails once
# in a while fails here.  Stops at the first failing round and says which.
#   tests/soak.sh [ROUNDS] [BUILDDIR]        (as root, from the source tree)
# The suite runs as CI runs it (root tests, style, netplan and torch
# required); the hog is one busy shell loop per 2 cores, niced as the suite.
set -eu
rounds=${1:-5}
builddir=${2:-build}
cd "$(dirname "$0")/.."
[ -d "$builddir" ] || { echo "soak: no build directory '$builddir' (meson setup $builddir -Dtests=true)" >&2; exit 2; }
# A build without the suite would pass every round having run nothing.
[ "$(meson introspect --tests "$builddir")" != "[]" ] ||
  { echo "soak: '$builddir' has no tests (meson configure $builddir -Dtests=true)" >&2; exit 2; }
ninja -C "$builddir" > /dev/null

hogs=()
stop_hogs() { [ "${#hogs[@]}" = 0 ] || kill "${hogs[@]}" 2> /dev/null || true; }
trap stop_hogs EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < ($(nproc) + 1) / 2; i++)); do
  sh -c 'while :; do :; done' &
  hogs+=($!)
done

for ((r = 1; r <= rounds; r++)); do
  start=$(date +%s)
  if SPARKCTL_REQUIRE_ROOT_TESTS=1 SPARKCTL_REQUIRE_STYLE=1 SPARKCTL_REQUIRE_NETPLAN=1 \
    SPARKCTL_REQUIRE_TORCH=1 meson test -C "$builddir" --num-processes "$(($(nproc) + 1))" \
    > "$builddir/soak-$r.log" 2>&1; then
    echo "soak: round $r of $rounds passed ($(($(date +%s) - start)) s, load $(cut -d' ' -f1 /proc/loadavg))"
  else
    grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT)' "$builddir/soak-$r.log" >&2 || true
    echo "soak: round $r of $rounds failed; see $builddir/meson-logs/testlog.txt" >&2
    exit 1
  fi
done
echo "soak: $rounds of $rounds rounds passed"
