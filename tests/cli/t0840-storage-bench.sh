#!/usr/bin/env bash
# storage bench with the real fio on a directory of the test's: positive
# figures in text and JSON (valid against its schema), and the test file
# gone afterwards; the files already there untouched; SIGTERM and SIGINT in
# the middle of fio's run end fio and remove the file; a filesystem that
# fills up during the write (a small tmpfs in a mount namespace of the
# test's) is one clear error with the file removed, and a test file that
# does not fit is refused before anything is written; fio missing (exit 3),
# a PATH that is no directory and bad options (exit 2).
. "$SRCDIR/tests/lib.sh"

command -v fio > /dev/null || skip "no fio (Debian: apt-get install fio)"
REAL_FIO=$(command -v fio)
dir=$TMP/shared
mkdir "$dir"

# Only what the test put there: the command's own file is gone.
leftovers() { # DIR
  find "$1" -name '.sparkctl-bench-*' | grep . && fail "a test file was left in $1" || :
}

# ---- figures: every profile, text and JSON
printf 'keep me\n' > "$dir/data"
ln -s data "$dir/link"
# A file named as the command names its own is not its own: left as it is.
printf 'mine\n' > "$dir/.sparkctl-bench-1-00000000"
touch -d '2020-01-01 00:00' "$dir/data" "$dir/.sparkctl-bench-1-00000000"
before=$(cd "$dir" && stat -c '%n %s %Y %i' data .sparkctl-bench-1-00000000)

expect 0 "$SPARKCTL" storage bench "$dir" --size 4M --runtime 1 --json
cp "$TMP/out" "$TMP/bench.json"
json_valid storage-bench "$TMP/bench.json"
[ "$(json_get "$TMP/bench.json" 'len(d["paths"])')" = 1 ] || fail "one path expected"
for key in read_gbytes_per_second write_gbytes_per_second rand4k_iops lat_p50_us lat_p99_us; do
  [ "$(json_get "$TMP/bench.json" "d['paths'][0]['$key'] > 0")" = True ] || fail "$key is not positive"
done
[ "$(json_get "$TMP/bench.json" '[r["profile"] for r in d["paths"][0]["runs"]]')" = \
  "['seq-read', 'seq-write', 'rand4k-qd128', 'lat-qd1']" ] || fail "the runs are not the four profiles"
[ "$(json_get "$TMP/bench.json" 'd["paths"][0]["size_bytes"]')" = 4194304 ] || fail "size_bytes"
[ "$(json_get "$TMP/bench.json" 'd["paths"][0]["verdict"]')" = "no line rate known" ] || fail "verdict"
[ "$(json_get "$TMP/bench.json" 'd["fio_version"].startswith("fio-")')" = True ] || fail "fio_version"
after=$(cd "$dir" && stat -c '%n %s %Y %i' data .sparkctl-bench-1-00000000)
[ "$before" = "$after" ] || fail "a file that was there changed: $before / $after"
[ "$(cat "$dir/data")" = "keep me" ] && [ "$(cat "$dir/.sparkctl-bench-1-00000000")" = mine ] ||
  fail "a file that was there changed"
[ "$(find "$dir" -mindepth 1 | wc -l)" = 3 ] || fail "the directory holds more than before: $(ls -A "$dir")"
rm "$dir/.sparkctl-bench-1-00000000"

# Text: the table and the note on the layout; -o writes the same JSON as --json.
expect 0 "$SPARKCTL" storage bench "$dir" --size 2M --runtime 1 --profiles seq-write,lat-qd1 -o "$TMP/o.json"
contains "$TMP/out" "PROTOCOL"
contains "$TMP/out" "GB/s"
contains "$TMP/out" "no line rate known"
no_trailing_blanks "$TMP/out"
json_valid storage-bench "$TMP/o.json"
[ "$(json_get "$TMP/o.json" 'd["paths"][0]["read_gbytes_per_second"]')" = None ] || fail "no seq-read was run"
leftovers "$dir"

# ---- SIGTERM and SIGINT while fio runs: fio ended, the file removed, 128+N
# The fio the command runs is the real one, kept running (--time_based) and
# telling the test its pid.
mkdir "$TMP/bin"
cat > "$TMP/bin/fio" << EOF
#!/bin/sh
echo \$\$ > "$TMP/fio.pid"
exec "$REAL_FIO" "\$@" --time_based
EOF
chmod +x "$TMP/bin/fio"
for sig in TERM INT; do
  rm -f "$TMP/fio.pid"
  PATH=$TMP/bin:$PATH "$SPARKCTL" storage bench "$dir" --size 4M --runtime 600 --profiles lat-qd1 \
    > "$TMP/sig.out" 2> "$TMP/sig.err" &
  pid=$!
  at_exit "kill -s KILL $pid 2> /dev/null"
  # fio started on the test file (a bound only so that a hang fails).
  for _ in $(seq 600); do
    [ -s "$TMP/fio.pid" ] && find "$dir" -name '.sparkctl-bench-*' | grep -q . && break
    sleep 0.1
  done
  [ -s "$TMP/fio.pid" ] || fail "fio never started"
  fio_pid=$(cat "$TMP/fio.pid")
  kill -0 "$fio_pid" || fail "fio is not running"
  kill -s "$sig" "$pid"
  set +e
  wait "$pid"
  status=$?
  set -e
  want=$((128 + $(kill -l "$sig")))
  [ "$status" = "$want" ] || { cat "$TMP/sig.err" >&2; fail "SIG$sig: exit $status, expected $want"; }
  contains "$TMP/sig.err" "test file removed"
  ! kill -0 "$fio_pid" 2> /dev/null || fail "fio ($fio_pid) is still running after SIG$sig"
  leftovers "$dir"
done

# ---- fio missing: exit 3, nothing created
mkdir "$TMP/nofio"
expect 3 env PATH="$TMP/nofio" "$SPARKCTL" storage bench "$dir" --size 1M --runtime 1
contains "$TMP/err" "fio is not installed (Debian: apt-get install fio)"
leftovers "$dir"

# ---- usage: no such directory, a file, bad options
expect 2 "$SPARKCTL" storage bench "$TMP/nosuch"
contains "$TMP/err" "$TMP/nosuch: no such directory"
[ "$(grep -c . "$TMP/err")" -le 2 ] || fail "more than a line and the hint: $(cat "$TMP/err")"
expect 2 "$SPARKCTL" storage bench "$dir/data"
contains "$TMP/err" "not a directory"
expect 2 "$SPARKCTL" storage bench "$dir" --profiles seq-read,bogus
contains "$TMP/err" "unknown profile 'bogus'"
expect 2 "$SPARKCTL" storage bench "$dir" --size 12Q
expect 2 "$SPARKCTL" storage bench "$dir" --json -o "$TMP/x.json"
expect 2 "$SPARKCTL" storage bench "$dir" --concurrent
# No PATH and no plan here: a usage error that says so.
expect 2 env SPARKCTL_ROOT="$TMP/emptyroot" "$SPARKCTL" storage bench
contains "$TMP/err" "no PATH given"

# ---- a small filesystem: a file that does not fit is refused; a disk that fills up during the write
if [ "$(id -u)" != 0 ] || ! unshare -m true 2> /dev/null; then
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "cannot make a mount namespace, and this run requires root tests"
  note "the full-filesystem cases need root (a mount namespace): not run"
  exit 0
fi
cat > "$TMP/bin/fio" << EOF
#!/bin/sh
# Another writer takes what is free just as fio starts.
dd if=/dev/zero of="$TMP/small/filler" bs=64k 2> /dev/null
exec "$REAL_FIO" "\$@"
EOF
mkdir "$TMP/small"
cat > "$TMP/small.sh" << EOF
set -e
mount -t tmpfs -o size=16M tmpfs "$TMP/small"
echo kept > "$TMP/small/kept"
# 16 MiB less 5% kept free: 32 MiB does not fit.
set +e
"$SPARKCTL" storage bench "$TMP/small" --size 32M --runtime 1 > "$TMP/nofit.out" 2> "$TMP/nofit.err"
echo \$? > "$TMP/nofit.status"
ls -A "$TMP/small" > "$TMP/nofit.ls"
PATH=$TMP/bin:\$PATH "$SPARKCTL" storage bench "$TMP/small" --size 4M --runtime 1 \
  --profiles seq-write > "$TMP/full.out" 2> "$TMP/full.err"
echo \$? > "$TMP/full.status"
ls -A "$TMP/small" > "$TMP/full.ls"
EOF
unshare -m sh "$TMP/small.sh"
[ "$(cat "$TMP/nofit.status")" = 1 ] || { cat "$TMP/nofit.err" >&2; fail "a file that does not fit: exit $(cat "$TMP/nofit.status")"; }
contains "$TMP/nofit.err" "a test file of 33554432 bytes does not fit"
[ "$(cat "$TMP/nofit.ls")" = kept ] || fail "the small filesystem holds $(cat "$TMP/nofit.ls")"
[ "$(cat "$TMP/full.status")" = 1 ] || { cat "$TMP/full.err" >&2; fail "a full filesystem: exit $(cat "$TMP/full.status")"; }
contains "$TMP/full.err" "the filesystem is full (No space left on device) during seq-write"
[ "$(grep -c . "$TMP/full.err")" = 1 ] || fail "more than one line: $(cat "$TMP/full.err")"
[ ! -s "$TMP/full.out" ] || fail "a report after the failure: $(cat "$TMP/full.out")"
[ "$(tr '\n' ' ' < "$TMP/full.ls")" = "filler kept " ] || fail "the small filesystem holds $(cat "$TMP/full.ls")"
