#!/usr/bin/env bash
# A capture taken in a fresh namespace has sysfs's layout: relative symlinks
# that resolve inside the capture, plain 0644 files and 0755 directories, and
# exactly the files sparkctl reads - nothing else of sysfs or procfs.
#
# The probe also reads files of /etc that one host has and another lacks
# (/etc/modules where kmod is installed, modules-load.d): the capture and the
# checks run with /etc overlaid, in a private mount namespace, by files of
# known content, so that they are the same on every host.
. "$SRCDIR/tests/lib.sh"
require_root
. "$SRCDIR/tests/netns/netns.sh"
umask 022

new_ns N n
ip -n "$N" link add sp1a type veth peer name sp1b || fail "cannot create a veth pair"
ip -n "$N" address add 198.18.5.1/24 dev sp1a
ip -n "$N" link set sp1a up
ip -n "$N" link set sp1b up
wait_until 10 "sp1a to be up" link_ready "$N" sp1a
wait_until 10 "sp1b to be up" link_ready "$N" sp1b

# with_test_etc CMD...: CMD with /etc overlaid by /etc/modules and two
# modules-load.d entries, one of them masked (a link to /dev/null).
mkdir "$TMP/etc-layer"
with_test_etc() {
  unshare -m bash -c 'set -e
    mount --make-rprivate /
    mount -t tmpfs sparkctl-test "$1"
    mkdir -p "$1/upper/modules-load.d" "$1/work"
    printf "# loaded at boot\nbonding\n" > "$1/upper/modules"
    printf "8021q\n" > "$1/upper/modules-load.d/sparkctl-test.conf"
    ln -s /dev/null "$1/upper/modules-load.d/sparkctl-masked.conf"
    mount -t overlay sparkctl-test -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc
    shift
    exec "$@"' with-test-etc "$TMP/etc-layer" "$@"
}

CAP=$TMP/cap
run with_test_etc ip netns exec "$N" "$SPARKCTL" capture "$CAP"
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "sparkctl capture in $N exited $status"; }
expect 0 "$SPARKCTL" topo --root "$CAP" --json
cp "$TMP/out" "$TMP/replay.json"
same_but_source "$CAP/.sparkctl/inventory.json" "$TMP/replay.json"

# sys/class/net/<dev> are the kernel's own relative links into sys/devices.
for dev in lo sp1a sp1b; do
  link=$CAP/sys/class/net/$dev
  [ -L "$link" ] || fail "$link is not a symlink"
  want=$(ip netns exec "$N" readlink "/sys/class/net/$dev")
  [ "$(readlink "$link")" = "$want" ] || fail "$link -> $(readlink "$link"), the kernel says $want"
  case $want in ../../devices/*) ;; *) fail "unexpected sysfs link target $want" ;; esac
  [ -d "$link" ] && [ ! -L "$CAP/sys/devices/virtual/net/$dev" ] \
    || fail "$link does not resolve to a directory of sys/devices"
done
[ "$(ls "$CAP/sys/class/net")" = "$(printf 'lo\nsp1a\nsp1b')" ] \
  || fail "sys/class/net of the capture: $(ls "$CAP/sys/class/net")"

# Files are plain copies.
[ -f "$CAP/proc/sys/kernel/hostname" ] && [ ! -L "$CAP/proc/sys/kernel/hostname" ] \
  || fail "proc/sys/kernel/hostname is not a regular file"
[ "$(cat "$CAP/proc/sys/kernel/hostname")" = "$(cat /proc/sys/kernel/hostname)" ] \
  || fail "the captured hostname differs"
[ "$(cat "$CAP/sys/class/net/sp1a/mtu")" = 1500 ] || fail "the captured mtu of sp1a"

# Every file, link and directory, checked against the rules.  The probe reads
# a device's driver link without following it, so only such a link may point
# at something that is not in the capture.
with_test_etc ip netns exec "$N" "$PYTHON" - "$CAP" "$(getent passwd "$(id -u)" | cut -d: -f6)" <<'PY' \
  || fail "the capture's layout is wrong"
import os, re, stat, sys

cap, home = sys.argv[1], sys.argv[2].strip("/")
errors = []
real_cap = os.path.realpath(cap)

# What a fresh namespace gives sparkctl to read (relative to the root).
net_attrs = {"ifindex", "mtu", "operstate", "carrier", "speed", "address",
             "phys_port_name", "phys_switch_id"}
allowed_files = [
    r"\.sparkctl/(host|ip-address|inventory)\.json",
    r"etc/os-release", r"usr/lib/os-release", r"etc/nccl\.conf",
    r"etc/modules", r"(etc|run|usr/lib)/modules-load\.d/[^/]+\.conf",
    r"etc/machine-id", r"etc/sparkctl/node-id",
    r"etc/NetworkManager/system-connections/[^/]+\.nmconnection",
    re.escape(home) + r"/\.nccl\.conf",
    r"proc/sys/kernel/(hostname|osrelease)", r"proc/sys/net/core/[rw]mem_max",
    r"proc/meminfo", r"proc/modules", r"proc/driver/nvidia/version",
    r"proc/[0-9]+/net/route",
    # avahi-daemon's process title, where one runs in this network namespace
    r"proc/[0-9]+/cmdline",
    # the CPUs as Slurm counts them (system.cpu)
    r"sys/devices/system/cpu/online",
    r"sys/devices/system/cpu/cpu[0-9]+/topology/(physical_package_id|core_id|thread_siblings_list)",
    r"sys/devices/virtual/net/(lo|sp1a|sp1b)/(%s)" % "|".join(net_attrs),
]
# What the probe could have read through a link: a file or a directory (a
# link to /dev/null, which masks a modules-load.d entry, leads to neither).
def readable(path):
    return os.path.isfile(path) or os.path.isdir(path)

# RDMA devices are not per namespace: where the host has some, their files
# (counters included) are read and captured too.
rdma = os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband")

for dirpath, dirnames, filenames in os.walk(cap):
    for name in dirnames + filenames:
        p = os.path.join(dirpath, name)
        rel = os.path.relpath(p, cap)
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(p)
            if target.startswith("/"):
                errors.append("absolute symlink %s -> %s" % (rel, target))
                continue
            resolved = os.path.realpath(p)
            if os.path.commonpath([resolved, real_cap]) != real_cap:
                errors.append("symlink %s -> %s leaves the capture" % (rel, target))
            elif not os.path.exists(p) and name != "driver" and readable("/" + rel):
                # Dangling in the capture but not on the host: something the probe read was lost.
                errors.append("dangling symlink %s -> %s" % (rel, target))
            # The same link on this host (in the namespace), except /proc/self;
            # an absolute target is made relative to the link (docs/capture.md).
            host = "/" + rel
            if rel != "proc/self" and os.path.islink(host):
                want = os.readlink(host)
                if want.startswith("/"):
                    want = "../" * rel.count("/") + (want.lstrip("/") or ".")
                if want != target:
                    errors.append("%s -> %s, but the host has -> %s" % (rel, target, os.readlink(host)))
        elif stat.S_ISDIR(st.st_mode):
            if stat.S_IMODE(st.st_mode) != 0o755:
                errors.append("directory %s has mode %o" % (rel, stat.S_IMODE(st.st_mode)))
        elif stat.S_ISREG(st.st_mode):
            if stat.S_IMODE(st.st_mode) != 0o644:
                errors.append("file %s has mode %o" % (rel, stat.S_IMODE(st.st_mode)))
            if st.st_nlink != 1:
                errors.append("file %s has %d links" % (rel, st.st_nlink))
            if not any(re.fullmatch(a, rel) for a in allowed_files) and not rdma:
                errors.append("file %s is not one sparkctl reads" % rel)
            if re.fullmatch(r"proc/[0-9]+/cmdline", rel) and \
                    not open(p, "rb").read().startswith(b"avahi-daemon: "):
                errors.append("file %s is the command line of another process than avahi-daemon" % rel)
        else:
            errors.append("%s is neither a file, a directory nor a symlink" % rel)
    if os.path.basename(dirpath) in ("statistics", "queues", "power", "subsystem"):
        errors.append("directory %s was copied" % os.path.relpath(dirpath, cap))

# Each netdev's directory holds exactly the attributes the kernel could give,
# with the kernel's content.
for dev in ("lo", "sp1a", "sp1b"):
    src = "/sys/class/net/" + dev
    dst = os.path.join(cap, "sys/devices/virtual/net", dev)
    want = {}
    for a in net_attrs:
        try:
            want[a] = open(os.path.join(src, a), "rb").read()
        except OSError:
            pass
    got = {a: open(os.path.join(dst, a), "rb").read() for a in os.listdir(dst)}
    if set(got) != set(want):
        errors.append("%s: captured %s, readable %s" % (dev, sorted(got), sorted(want)))
    for a in set(got) & set(want):
        if got[a] != want[a]:
            errors.append("%s/%s: captured %r, the kernel has %r" % (dev, a, got[a], want[a]))

if errors:
    print("\n".join(errors), file=sys.stderr)
    sys.exit(1)
PY

# The /etc files of the overlay, as the probe read them.
[ "$(cat "$CAP/etc/modules")" = "$(printf '# loaded at boot\nbonding')" ] \
  || fail "etc/modules was not captured"
[ "$(cat "$CAP/etc/modules-load.d/sparkctl-test.conf")" = 8021q ] \
  || fail "etc/modules-load.d/sparkctl-test.conf was not captured"
[ "$(readlink "$CAP/etc/modules-load.d/sparkctl-masked.conf")" = ../../dev/null ] \
  || fail "the masked etc/modules-load.d entry is not a link to ../../dev/null"

# The captured route table is the namespace's.
route=$(find "$CAP/proc" -path '*/net/route' -type f)
[ -n "$route" ] || fail "no proc/*/net/route in the capture"
[ -L "$CAP/proc/net" ] && [ "$(readlink "$CAP/proc/net")" = self/net ] || fail "proc/net is not the link self/net"
ip netns exec "$N" cat /proc/net/route > "$TMP/route"
same "$TMP/route" "$route"
