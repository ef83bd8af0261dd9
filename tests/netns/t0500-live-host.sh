#!/usr/bin/env bash
# The live probe of this host agrees with the system, and 'sparkctl capture'
# of it replays to the same inventory; a capture never overwrites a directory
# and leaves nothing half-written behind when it fails.
. "$SRCDIR/tests/lib.sh"
require_root
. "$SRCDIR/tests/netns/netns.sh"
umask 022

# Variables sparkctl records (NCCL_*, UCX_*), and two it must not: a look-alike
# name and a secret.
SECRET="sparkctl-secret-$$-$RANDOM$RANDOM"
IFNAME_VALUE="=sp0,^docker0 x=y"
sk() {
  env NCCL_SOCKET_IFNAME="$IFNAME_VALUE" UCX_NET_DEVICES="mlx5_0:1,mlx5_1:1" \
    MY_NCCL_SOCKET_IFNAME=decoy AWS_SECRET_ACCESS_KEY="$SECRET" "$SPARKCTL" "$@"
}

# ---- the live probe ---------------------------------------------------------
expect 0 sk topo
[ -s "$TMP/out" ] || fail "sparkctl topo printed nothing"
expect 0 sk topo --json
cp "$TMP/out" "$TMP/live.json"

py "$TMP/live.json" '
s = d["system"]
want(d["source"], "live", "source")
want(d["root"], None, "root")
want(s["hostname"], open("/proc/sys/kernel/hostname").read().strip(), "hostname")
want(s["kernel"], args[0], "kernel")
want(s["arch"], args[1], "arch")
want(s["home"], args[2], "home")
mem = [l.split() for l in open("/proc/meminfo") if l.startswith("MemTotal:")][0]
want(mem[2], "kB", "MemTotal unit")
want(s["memory"]["memory_total_bytes"], int(mem[1]) * 1024, "memory_total_bytes")
want(s["sysctl"]["net.core.rmem_max"], int(open("/proc/sys/net/core/rmem_max").read()), "rmem_max")
want(s["sysctl"]["net.core.wmem_max"], int(open("/proc/sys/net/core/wmem_max").read()), "wmem_max")
' "$(uname -r)" "$(uname -m)" "$(getent passwd "$(id -u)" | cut -d: -f6)"

# Netdevs: exactly the entries of /sys/class/net, sorted by name, with their
# attributes; lo has 127.0.0.1/8.
py "$TMP/live.json" '
import os
names = sorted(os.listdir("/sys/class/net"))
want([n["name"] for n in d["netdevs"]], names, "netdev names")
def sysfs(name, attr):
    try:
        return open("/sys/class/net/%s/%s" % (name, attr)).read().strip()
    except OSError:
        return None
for name in names:
    n = nd(name)
    want(n["mtu"], int(sysfs(name, "mtu")), name + " mtu")
    want(n["ifindex"], int(sysfs(name, "ifindex")), name + " ifindex")
    want(n["address"], sysfs(name, "address"), name + " address")
    want(n["operstate"], sysfs(name, "operstate"), name + " operstate")
    c = sysfs(name, "carrier")
    want(n["carrier"], {"1": True, "0": False}.get(c), name + " carrier")
lo = nd("lo")
want(lo["mtu"], int(open("/sys/class/net/lo/mtu").read()), "lo mtu")
if {"address": "127.0.0.1", "prefix_len": 8} not in lo["ipv4"]:
    sys.exit("lo lacks 127.0.0.1/8: %r" % lo["ipv4"])
want(lo["default_route"], False, "lo default_route")
'

# The addresses agree with ip(8), family by family, in the kernel's order.
ip -j address show > "$TMP/ip.json"
py "$TMP/live.json" '
links = json.load(open(args[0]))
for l in links:
    if l["ifname"] not in [n["name"] for n in d["netdevs"]]:
        continue
    n = nd(l["ifname"])
    for fam, key in (("inet", "ipv4"), ("inet6", "ipv6")):
        exp = [{"address": a["local"], "prefix_len": a["prefixlen"]}
               for a in l.get("addr_info", []) if a.get("family") == fam]
        want(n[key], exp, l["ifname"] + " " + key)
' "$TMP/ip.json"

# Default routes agree with /proc/net/route.
py "$TMP/live.json" '
dflt = set()
for line in open("/proc/net/route").read().splitlines()[1:]:
    f = line.split()
    if f[1] == "00000000" and f[7] == "00000000":
        dflt.add(f[0])
for n in d["netdevs"]:
    want(n["default_route"], n["name"] in dflt, n["name"] + " default_route")
'

# The environment: the recorded variables with their exact values, never a
# secret or an unrelated variable; nothing that is not in the environment.
py "$TMP/live.json" '
import os
env = d["system"]["environment"]
want(env.get("NCCL_SOCKET_IFNAME"), args[0], "NCCL_SOCKET_IFNAME")
want(env.get("UCX_NET_DEVICES"), "mlx5_0:1,mlx5_1:1", "UCX_NET_DEVICES")
for k in ("AWS_SECRET_ACCESS_KEY", "MY_NCCL_SOCKET_IFNAME", "PATH", "HOME", "SPARKCTL"):
    if k in env:
        sys.exit("environment records %s" % k)
if args[1] in json.dumps(d):
    sys.exit("the secret value appears in the inventory")
want(list(env), sorted(env), "environment order")
for k, v in env.items():
    if k not in ("NCCL_SOCKET_IFNAME", "UCX_NET_DEVICES"):
        want(v, os.environ.get(k), "environment " + k)
' "$IFNAME_VALUE" "$SECRET"

# Locked-memory limits (bytes; ulimit -l counts KiB), and both limit forms.
limits_are() { # limits_are FILE SOFT HARD   (KiB or "unlimited")
  py "$1" '
lim = d["system"]["limits"]
for key, v in (("memlock_soft", args[0]), ("memlock_hard", args[1])):
    got = lim[key]
    if v == "unlimited":
        want(got, "unlimited", key)
    elif not isinstance(got, int) or got // 1024 != int(v):
        sys.exit("%s: got %r, expected %s KiB" % (key, got, v))
' "$2" "$3"
}
limits_are "$TMP/live.json" "$(ulimit -S -l)" "$(ulimit -H -l)"
(ulimit -S -l 1234 && sk topo --json > "$TMP/lim.json") || fail "topo under ulimit -l 1234"
py "$TMP/lim.json" 'want(d["system"]["limits"]["memlock_soft"], 1234 * 1024, "memlock_soft")'
if (ulimit -l unlimited) 2> /dev/null; then
  (ulimit -l unlimited && sk topo --json > "$TMP/unl.json") || fail "topo under ulimit -l unlimited"
  limits_are "$TMP/unl.json" unlimited unlimited
else
  note "cannot raise the locked-memory limit here: \"unlimited\" is not tested"
fi

# ---- capture and replay -----------------------------------------------------
CAP=$TMP/cap
expect 0 sk topo
cp "$TMP/out" "$TMP/live.txt"
expect 0 sk capture "$CAP"
contains "$TMP/err" "to $CAP"
[ -d "$CAP" ] && [ ! -L "$CAP" ] || fail "capture did not create $CAP"
for f in host.json ip-address.json inventory.json; do
  [ -f "$CAP/.sparkctl/$f" ] || fail "the capture lacks .sparkctl/$f"
done
py "$CAP/.sparkctl/inventory.json" '
want(d["source"], "live", "captured source")
want(d["root"], None, "captured root")
'

expect 0 sk topo --root "$CAP" --json
cp "$TMP/out" "$TMP/replay.json"
py "$TMP/replay.json" '
want(d["source"], "root", "replay source")
want(d["root"], args[0], "replay root")
want(d["problems"], json.load(open(args[1]))["problems"], "problems of the replay")
' "$CAP" "$TMP/live.json"
same_but_source "$CAP/.sparkctl/inventory.json" "$TMP/replay.json"
# The replay is this host: same facts as the live probe, where they are stable.
py "$TMP/replay.json" '
live = json.load(open(args[0]))
for k in ("hostname", "kernel", "arch", "home", "os", "environment", "limits", "nccl"):
    want(d["system"][k], live["system"][k], "replayed system." + k)
want(d["system"]["memory"]["memory_total_bytes"], live["system"]["memory"]["memory_total_bytes"], "memory_total")
want([n["name"] for n in d["netdevs"]], [n["name"] for n in live["netdevs"]], "replayed netdev names")
for a, b in zip(d["netdevs"], live["netdevs"]):
    for k in ("mtu", "ifindex", "address", "driver", "pci_address", "ipv4", "ipv6", "default_route"):
        want(a[k], b[k], "replayed %s.%s" % (a["name"], k))
' "$TMP/live.json"

# The table of the replay is the live table; only its header names the tree.
expect 0 sk topo --root "$CAP"
cp "$TMP/out" "$TMP/replay.txt"
[ "$(head -n 1 "$TMP/replay.txt")" = "$(head -n 1 "$TMP/live.txt")  [from $CAP]" ] \
  || fail "replay header: '$(head -n 1 "$TMP/replay.txt")'"
tail -n +2 "$TMP/live.txt" > "$TMP/live-body.txt"
tail -n +2 "$TMP/replay.txt" > "$TMP/replay-body.txt"
same "$TMP/live-body.txt" "$TMP/replay-body.txt"

# host.json keeps the NCCL variable, and the secret is nowhere in the tree.
py "$CAP/.sparkctl/host.json" '
env = d["environment"]
want(env.get("NCCL_SOCKET_IFNAME"), args[0], "host.json NCCL_SOCKET_IFNAME")
for k in ("AWS_SECRET_ACCESS_KEY", "MY_NCCL_SOCKET_IFNAME"):
    if k in env:
        sys.exit("host.json records " + k)
' "$IFNAME_VALUE"
! grep -rqF -- "$SECRET" "$CAP" || fail "the secret value was written into the capture"
! grep -rqF -- "AWS_SECRET_ACCESS_KEY" "$CAP" || fail "the secret's name was written into the capture"

# ---- a capture never overwrites, and never leaves a partial tree ------------
snapshot() { # snapshot DIR: names, types, modes, sizes, times, link targets, contents
  (cd "$1" && find . -printf '%p|%y|%m|%s|%T@|%l\n' | LC_ALL=C sort &&
    find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}
no_partial() {
  local left
  left=$(find "$TMP" -name '*.partial-*' -print)
  [ -z "$left" ] || fail "a partial capture was left behind: $left"
}

snapshot "$CAP" > "$TMP/before"
expect 1 sk capture "$CAP"
contains "$TMP/err" "already exists"
snapshot "$CAP" > "$TMP/after"
same "$TMP/before" "$TMP/after"
no_partial

# A regular file in the way.
printf 'keep me\n' > "$TMP/file"
expect 1 sk capture "$TMP/file"
[ "$(cat "$TMP/file")" = "keep me" ] || fail "capture changed a file in its way"
no_partial

# An existing empty directory is filled.
mkdir "$TMP/empty"
expect 0 sk capture "$TMP/empty"
[ -f "$TMP/empty/.sparkctl/inventory.json" ] || fail "capture into an empty directory"
no_partial

# A parent that does not exist.
expect 1 sk capture "$TMP/nope/cap"
contains "$TMP/err" "$TMP/nope/cap"
[ ! -e "$TMP/nope" ] || fail "capture created the missing parent"
no_partial

# A parent that is not writable: permissions (without root's override), and a
# read-only mount in a private mount namespace.
mkdir "$TMP/ro"
chmod 0555 "$TMP/ro"
if command -v setpriv > /dev/null 2>&1; then
  expect 1 setpriv --bounding-set=-dac_override,-dac_read_search -- \
    env NCCL_SOCKET_IFNAME=x "$SPARKCTL" capture "$TMP/ro/cap"
  contains "$TMP/err" "Permission denied"
  [ -z "$(ls -A "$TMP/ro")" ] || fail "capture wrote into a read-only parent"
  no_partial
else
  note "no setpriv: the permission case is not tested"
fi
chmod 0755 "$TMP/ro"
expect 1 unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
  exec "$2" capture "$1/cap"' sh "$TMP/ro" "$SPARKCTL"
contains "$TMP/err" "Read-only file system"
[ -z "$(ls -A "$TMP/ro")" ] || fail "capture wrote below a read-only mount"
no_partial

# A capture that fails at its very end (the output directory is a mount point,
# so the finished tree cannot be renamed onto it) removes the tree it built.
mkdir "$TMP/mnt"
expect 1 unshare -m sh -c 'mount -t tmpfs sparkctl-test "$1" && "$2" capture "$1"; rc=$?;
  [ -z "$(ls -A "$1")" ] || { echo "mount point not empty" >&2; exit 9; }; exit $rc' \
  sh "$TMP/mnt" "$SPARKCTL"
contains "$TMP/err" "cannot move the capture"
[ -z "$(ls -A "$TMP/mnt")" ] || fail "capture left files in $TMP/mnt"
no_partial
