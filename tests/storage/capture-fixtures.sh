#!/usr/bin/env bash
# tests/storage/capture-fixtures.sh [BUILD]: capture tests/fixtures/storage/
# from the storage VM (tests/storage/vm.sh): boots the VM once, runs
# tests/storage/capture-job.sh there, and replaces the fixtures with what it
# left.  BUILD (default build/) holds the sparkctl that goes into the VM
# (the capture does not run it).  Needs what scripts/setup test installs.
set -eu
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
SPARKCTL=$(cd "${1:-$SRCDIR/build}" && pwd)/sparkctl
export SRCDIR SPARKCTL
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/storage/vm.sh"
SPARKCTL_REQUIRE_ROOT_TESTS=1 vm_require
vm_build
vm_add "$SRCDIR/tests/storage/raw.sh" /job/raw.sh
vm_run "$SRCDIR/tests/storage/capture-job.sh" 120
cat "$VM_OUT/log"
[ "$VM_STATUS" = 0 ] || {
  for f in "$VM_OUT"/fixtures/*.err; do
    [ -f "$f" ] && { echo "--- ${f##*/}:"; head -n 20 "$f"; }
  done
  fail "the capture job exited $VM_STATUS"
}
dest=$SRCDIR/tests/fixtures/storage
find "$dest" -mindepth 1 -not -name README -delete 2> /dev/null || :
mkdir -p "$dest"
cp -a "$VM_OUT/fixtures/." "$dest/"
echo "captured into $dest in ${VM_SECONDS}s"
