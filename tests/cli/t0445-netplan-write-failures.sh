#!/usr/bin/env bash
# netplan --write that fails after it has written its new file: the file in
# place and the previous backup are left exactly as they were.  rename()
# onto a mount point fails (EBUSY), so a file bind-mounted over the target,
# or over the backup, in a private mount namespace makes the write fail at
# that step.
. "$SRCDIR/tests/lib.sh"
require_root
command -v unshare > /dev/null || fail "no unshare"

cd "$SRCDIR"
R=$TMP/root
cp -a tests/fixtures/spark-1cable "$R"
mkdir -p "$R/etc/netplan"
dir=$R/etc/netplan
target=$dir/90-sparkctl.yaml
args=(--root "$R" --plan pair --node 0 --write --force)

# A file in place (node 1's) and a backup (node 0's) to keep.
expect 0 "$SPARKCTL" netplan "${args[@]}"
expect 0 "$SPARKCTL" netplan --root "$R" --plan pair --node 1 --write
cp "$target" "$TMP/current"
cp "$target.bak" "$TMP/backup"
snapshot() { (cd "$dir" && find . -printf '%p %y %m %s %i\n' | LC_ALL=C sort) > "$1"; }
snapshot "$TMP/before"

# over FILE MOUNTPOINT CMD...: CMD with FILE bind-mounted over MOUNTPOINT.
over() {
  unshare -m bash -c 'mount --make-rprivate / && mount --bind "$1" "$2" && shift 2 && exec "$@"' \
    over "$@"
}
printf 'mounted over\n' > "$TMP/over"

# The target cannot be replaced.
run over "$TMP/over" "$target" "$SPARKCTL" netplan "${args[@]}"
[ "$status" = 1 ] || { cat "$TMP/err" >&2; fail "a failed replace exited $status"; }
contains "$TMP/err" "cannot replace '90-sparkctl.yaml'"
same "$TMP/current" "$target"
same "$TMP/backup" "$target.bak"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after"
[ "$(cat "$TMP/over")" = "mounted over" ] || fail "the mounted file was changed"

# The backup cannot be replaced: the new file is taken back.
run over "$TMP/over" "$target.bak" "$SPARKCTL" netplan "${args[@]}"
[ "$status" = 1 ] || { cat "$TMP/err" >&2; fail "a failed backup exited $status"; }
contains "$TMP/err" "90-sparkctl.yaml.bak"
same "$TMP/current" "$target"
same "$TMP/backup" "$target.bak"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after"

# And with nothing in the way, the same command works.
expect 0 "$SPARKCTL" netplan "${args[@]}"
same "$TMP/current" "$target.bak"
"$SPARKCTL" netplan --root "$R" --plan pair --node 0 > "$TMP/printed"
same "$TMP/printed" "$target"
