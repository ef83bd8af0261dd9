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
contains "$TMP/out" "note: reads run on a file fio lays out"
json_valid storage-bench "$TMP/o.json"
# -q: the table alone.
expect 0 "$SPARKCTL" storage bench "$dir" --size 2M --runtime 1 --profiles seq-read -q
contains "$TMP/out" "PROTOCOL"
lacks "$TMP/out" "note:"
[ ! -s "$TMP/err" ] || fail "-q printed on stderr: $(cat "$TMP/err")"
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

# ---- the protocol and the verdict, from a host tree (SPARKCTL_ROOT) whose sysfs
# puts the test's directory on an NVMe/TCP disk, and its plan
root=$TMP/root
ctl=$root/sys/devices/virtual/nvme-fabrics/ctl/nvme1
mkdir -p "$ctl/nvme1n1" "$root/sys/dev/block" "$root/sys/class/block" "$root/sys/class/net/eth9" \
  "$root/sys/class/net/lo" "$root/etc/sparkctl/storage.d"
echo tcp > "$ctl/transport"
echo traddr=198.18.1.1,trsvcid=4420,src_addr=127.0.0.1 > "$ctl/address"
ln -s ../../nvme1 "$ctl/nvme1n1/device"
ln -s ../../devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1 "$root/sys/dev/block/$(stat -c '%Hd:%Ld' "$dir")"
ln -s ../../devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1 "$root/sys/class/block/nvme1n1"
# eth9, the plan's interface: a line rate no disk reaches half of (low, exit 4).
echo 400000000 > "$root/sys/class/net/eth9/speed"
echo 9000 > "$root/sys/class/net/eth9/mtu"
# lo, which holds src_addr: 10 Mb/s, which every disk passes.
echo 10 > "$root/sys/class/net/lo/speed"
echo 1500 > "$root/sys/class/net/lo/mtu"
# The plan, its unit named as systemd-escape --path names it.
/usr/bin/python3 - "$dir" "$root/etc/sparkctl/storage.d" << 'PY'
import json, sys
mount = sys.argv[1]
esc = "".join(c if c.isalnum() or c in ":_." else "-" if c == "/" else "\\x%02x" % ord(c)
              for c in mount.strip("/"))
json.dump({"schema_version": 1, "target": {"address": "198.18.1.1", "port": 4420},
           "nqn": "nqn.2026-01.org.example:shared", "mount": mount, "fs": "ext4",
           "uuid": "0b8e4b7c-5a36-4c43-9d2c-6f1f3b3c2a10", "interface": "eth9",
           "unit": "sparkctl-nvme-" + esc + ".service", "node": "spark1",
           "nodes": [{"name": "spark1", "access": "rw"}]}, open(sys.argv[2] + "/" + esc + ".json", "w"))
PY
# No PATH: the plan's mount, judged against eth9.
expect 4 env SPARKCTL_ROOT="$root" "$SPARKCTL" storage bench --size 2M --runtime 1 --profiles seq-read --json
cp "$TMP/out" "$TMP/low.json"
json_valid storage-bench "$TMP/low.json"
[ "$(json_get "$TMP/low.json" '[d["paths"][0][k] for k in ("path", "protocol", "device", "interface", "line_rate_gbps", "mtu", "verdict")]')" = \
  "['$dir', 'nvme-tcp', 'nvme1n1', 'eth9', 400000.0, 9000, 'low']" ] || fail "the planned path: $(cat "$TMP/low.json")"
# 400000 Gb/s at MTU 9000: 50000 GB/s of line, less the headers.
[ "$(json_get "$TMP/low.json" 'd["paths"][0]["ceiling_gbytes_per_second"]')" = 49559.414 ] || fail "the ceiling"
leftovers "$dir"
# The plan's mount given as PATH: the plan's interface still.
expect 4 env SPARKCTL_ROOT="$root" "$SPARKCTL" storage bench "$dir/" --size 2M --runtime 1 --profiles seq-read
grep -E " nvme-tcp .* low: 0% of 49559\.41 GB/s \(eth9, 400000 Gb/s, MTU 9000\)$" "$TMP/out" > /dev/null ||
  { cat "$TMP/out" >&2; fail "the verdict of the plan's mount against eth9"; }
# Another directory on that disk: the interface is the one that holds src_addr (lo), and the verdict ok.
other=$TMP/other
mkdir "$other"
expect 0 env SPARKCTL_ROOT="$root" "$SPARKCTL" storage bench "$other" --size 2M --runtime 1 --profiles seq-read
grep -E "^${other//./\\.} +nvme-tcp .* ok: [0-9]+% of 0\.00 GB/s \(lo, 0 Gb/s, MTU 1500\)$" "$TMP/out" > /dev/null ||
  { cat "$TMP/out" >&2; fail "the verdict against lo"; }
leftovers "$other"
# Two volumes planned, no PATH: both mounts, each judged against its own plan's interface
# (the other plan names none: lo, which holds src_addr).
/usr/bin/python3 - "$other" "$root/etc/sparkctl/storage.d" << 'PY'
import glob, json, sys
mount, d = sys.argv[1], sys.argv[2]
esc = "".join(c if c.isalnum() or c in ":_." else "-" if c == "/" else "\\x%02x" % ord(c)
              for c in mount.strip("/"))
plan = json.load(open(glob.glob(d + "/*.json")[0]))
plan.update(mount=mount, interface=None, nqn="nqn.2026-01.org.example:other",
            unit="sparkctl-nvme-" + esc + ".service")
json.dump(plan, open(d + "/" + esc + ".json", "w"))
PY
expect 4 env SPARKCTL_ROOT="$root" "$SPARKCTL" storage bench --size 2M --runtime 1 --profiles seq-read --json
[ "$(json_get "$TMP/out" 'sorted((p["path"], p["interface"], p["verdict"]) for p in d["paths"])')" = \
  "$(/usr/bin/python3 -c 'import sys; print(sorted([(sys.argv[1], "eth9", "low"), (sys.argv[2], "lo", "ok")]))' "$dir" "$other")" ] ||
  fail "two planned volumes: $(cat "$TMP/out")"
rm "$root/etc/sparkctl/storage.d/$(basename "$(ls "$root"/etc/sparkctl/storage.d/*other*.json)")"
leftovers "$dir"
leftovers "$other"
# A local path beside it (/dev/shm, another filesystem: no disk): its own row,
# protocol other, no line rate.
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$dir")" ]; then
  expect 0 env SPARKCTL_ROOT="$root" "$SPARKCTL" storage bench "$other" --local /dev/shm --size 2M \
    --runtime 1 --profiles seq-write --json
  [ "$(json_get "$TMP/out" '[(p["role"], p["protocol"], p["verdict"]) for p in d["paths"]]')" = \
    "[('shared', 'nvme-tcp', 'ok'), ('local', 'other', 'no line rate known')]" ] ||
    fail "the --local row: $(cat "$TMP/out")"
  leftovers /dev/shm
fi
leftovers "$dir"

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
