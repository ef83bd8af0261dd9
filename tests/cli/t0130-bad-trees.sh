#!/usr/bin/env bash
# Hostile or broken trees under --root: every bad value becomes "unknown" with a
# problem that names the file; nothing crashes, hangs or fails the whole probe.
. "$SRCDIR/tests/lib.sh"

fresh() { rm -rf "$TMP/t"; cp -a "$FIXTURES/spark-1cable" "$TMP/t"; }
DEV=$TMP/t/sys/class/infiniband/rocep1s0f1
PORT=$DEV/ports/1

# probe_ok: topo (table and JSON) succeeds on the tree; JSON lands in $TMP/j.json.
probe_ok() {
  expect 0 timeout 20 "$SPARKCTL" topo --root "$TMP/t"
  expect 0 timeout 20 "$SPARKCTL" topo --root "$TMP/t" --json
  cp "$TMP/out" "$TMP/j.json"
}
problem() { # problem PATH-SUBSTRING MESSAGE-SUBSTRING
  python3 - "$TMP/j.json" "$1" "$2" <<'PY' || fail "no problem for $1 with '$2'"
import json, sys
probs = json.load(open(sys.argv[1]))["problems"]
if not any(sys.argv[2] in (p["path"] or "") and sys.argv[3] in p["message"] for p in probs):
    print(probs, file=sys.stderr)
    sys.exit(1)
PY
}
port() { json_get "$TMP/j.json" "[p for x in d['rdma_devices'] if x['name']=='rocep1s0f1' for p in x['ports']][0]$1"; }

# Garbage in state, rate and a GID.
fresh
printf 'ACTIVE and well\n' > "$PORT/state"
printf 'fast\n' > "$PORT/rate"
printf 'not-a-gid\n' > "$PORT/gids/3"
probe_ok
[ "$(port "['state']")" = None ] || fail "garbage state was not unknown"
[ "$(port "['rate']")" = None ] || fail "garbage rate was not unknown"
problem ports/1/state "unexpected content 'ACTIVE and well'"
problem ports/1/rate "unexpected content 'fast'"
problem ports/1/gids/3 "unexpected content 'not-a-gid'"
# Without its v2 GID at 3 the port falls back to index 2 (the IPv4 v1 GID) - NCCL's rule.

# Truncated and empty files.
fresh
printf '4' > "$PORT/state"
: > "$PORT/rate"
: > "$TMP/t/sys/class/net/enp1s0f1np1/mtu"
probe_ok
problem ports/1/state "unexpected content '4'"
problem enp1s0f1np1/mtu "unexpected content ''"
json_get "$TMP/j.json" "[n['mtu'] for n in d['netdevs'] if n['name']=='enp1s0f1np1'][0]" | grep -qx None \
  || fail "empty mtu was not unknown"

# Binary junk and a NUL byte.
fresh
printf '\x00\x01\xfe\xff' > "$PORT/link_layer"
printf 'spark\x00evil\n' > "$TMP/t/proc/sys/kernel/hostname"
probe_ok
problem proc/sys/kernel/hostname "NUL byte"

# A missing directory (no ports at all) and a missing sys/class/infiniband.
fresh
rm -rf "$(readlink -f "$DEV")/ports"
probe_ok
[ "$(json_get "$TMP/j.json" "[x['ports'] for x in d['rdma_devices'] if x['name']=='rocep1s0f1'][0]")" = "[]" ] \
  || fail "ports of a device without a ports directory"
fresh
rm -rf "$TMP/t/sys/class/infiniband"
probe_ok
contains "$TMP/j.json" '"rdma_devices": []'

# A symlink loop where a file is expected, and where a directory is expected.
fresh
rm "$PORT/rate"; ln -s rate2 "$PORT/rate"; ln -s rate "$PORT/rate2"
rm -rf "$TMP/t/sys/class/net/lo"; ln -s lo "$TMP/t/sys/class/net/lo"
probe_ok
problem ports/1/rate "Too many levels of symbolic links"

# A 1 GiB file where a line is expected, a FIFO where a file is expected.
fresh
rm "$PORT/state"; truncate -s 1G "$PORT/state"
rm "$TMP/t/proc/meminfo"; mkfifo "$TMP/t/proc/meminfo"
probe_ok
problem ports/1/state "larger than"
problem proc/meminfo "not a regular file"

# Garbage in the capture's own files.
fresh
printf '{"arch": 5' > "$TMP/t/.sparkctl/host.json"
printf 'not json' > "$TMP/t/.sparkctl/ip-address.json"
probe_ok
problem .sparkctl/host.json "host.json:1:"
problem .sparkctl/ip-address.json "invalid JSON"
fresh
printf '{"arch": 5}' > "$TMP/t/.sparkctl/host.json"
printf '[{"ifname": "enp1s0f1np1", "addr_info": [{"family": "inet", "local": "1.2.3", "prefixlen": 99}]}]' \
  > "$TMP/t/.sparkctl/ip-address.json"
probe_ok
problem .sparkctl/host.json "arch: expected a string"
problem .sparkctl/ip-address.json "malformed address entry of 'enp1s0f1np1'"
fresh
rm -rf "$TMP/t/.sparkctl"
probe_ok
problem .sparkctl/host.json "not in the tree"
contains "$TMP/out" '"ipv4": []'

# Absolute symlinks in a tree resolve inside it, never on this host.
fresh
rm "$TMP/t/etc/os-release"; ln -s /etc/os-release "$TMP/t/etc/os-release"
rm -rf "$TMP/t/usr"
probe_ok
json_get "$TMP/j.json" "d['system']['os']['id']" | grep -qx None || fail "an absolute symlink escaped the root"

# A counter whose file name is not UTF-8 (a name becomes a JSON key): JSON
# holds it with U+FFFD for the bad byte, and nothing aborts.
fresh
printf '7\n' > "$PORT/counters/$(printf 'bad\377name')"
probe_ok
json_get "$TMP/j.json" "[p for r in d['rdma_devices'] for p in r['ports'] if 'bad\ufffdname' in p['counters']][0]['counters']['bad\ufffdname']" \
  | grep -qx 7 || fail "the counter with a name that is not UTF-8 is not in the JSON"
