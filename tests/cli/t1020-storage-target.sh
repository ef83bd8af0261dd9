#!/usr/bin/env bash
# storage target: the configfs operations, printed, applied below a root,
# undone on a failure midway, and torn down again.
#
# The root here is a plain directory standing in for configfs: the test
# makes the directories the kernel would have (nvmet/, nullb/ once the
# modules are loaded), and the attributes are files sparkctl writes.  It
# shows the order and the content of what is made and removed, not that
# the kernel takes it: real configfs, nvmet and null_blk are exercised by
# the VM test of tests/storage/.
. "$SRCDIR/tests/lib.sh"

NQN=nqn.2026-01.org.example:shared
HOST=nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555
R=$TMP/root
CFS=$R/sys/kernel/config
mkdir -p "$CFS/nvmet/subsystems" "$CFS/nvmet/ports" "$CFS/nvmet/hosts" "$CFS/nullb" "$R/dev" \
  "$R/sys/module/nvmet_tcp"
: > "$R/dev/nvme0n1"
listing() { (cd "$R" && find . | LC_ALL=C sort) > "$1"; }
# The null_blk device made for an NQN, as --print names it.
nullb_of() {
  "$SPARKCTL" storage target --root "$R" --nqn "$1" --null-blk 1M --listen 198.18.0.1 |
    sed -n 's|^mkdir .*/nullb/\([^/]*\).$|\1|p'
}
NB=$(nullb_of $NQN)
NB3=$(nullb_of $NQN.3)
[ -n "$NB" ] && [ -n "$NB3" ] || fail "no null_blk device in the printed operations"
# What devtmpfs shows once they are powered on, which --apply waits for.
: > "$R/dev/$NB"
: > "$R/dev/$NB3"
listing "$TMP/empty"

# --print (the default) shows the operations as shell commands and makes nothing.
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --null-blk 64M \
  --listen 198.18.0.1:4420 --allow-host $HOST
golden storage-target-print.txt "$TMP/out"
listing "$TMP/now"
same "$TMP/empty" "$TMP/now"

# --apply makes exactly that, in place.
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --null-blk 64M \
  --listen 198.18.0.1:4420 --allow-host $HOST --apply
contains "$TMP/out" "made subsystem $NQN: namespace 1 on /dev/$NB, listening on tcp 198.18.0.1:4420 (nvmet port 1)"
S=$CFS/nvmet/subsystems/$NQN
[ "$(cat "$CFS/nullb/$NB/memory_backed")" = 1 ] || fail "null_blk not memory backed"
[ "$(cat "$CFS/nullb/$NB/size")" = 64 ] || fail "null_blk size not 64 MiB"
[ "$(cat "$CFS/nullb/$NB/power")" = 1 ] || fail "null_blk not powered"
[ "$(cat "$S/namespaces/1/device_path")" = "/dev/$NB" ] || fail "device_path"
[ "$(cat "$S/namespaces/1/enable")" = 1 ] || fail "namespace not enabled"
[ "$(cat "$S/attr_allow_any_host")" = 0 ] || fail "any host allowed despite --allow-host"
[ "$(readlink "$S/allowed_hosts/$HOST")" = "/sys/kernel/config/nvmet/hosts/$HOST" ] ||
  fail "allowed host link"
[ "$(cat "$CFS/nvmet/ports/1/addr_traddr")" = 198.18.0.1 ] || fail "traddr"
[ "$(cat "$CFS/nvmet/ports/1/addr_trsvcid")" = 4420 ] || fail "trsvcid"
[ "$(cat "$CFS/nvmet/ports/1/addr_adrfam")" = ipv4 ] || fail "adrfam"
[ "$(readlink "$CFS/nvmet/ports/1/subsystems/$NQN")" = "/sys/kernel/config/nvmet/subsystems/$NQN" ] ||
  fail "port link"
listing "$TMP/made"

# Made twice is refused; so is the address of another subsystem's port, and a
# port id in use.  Nothing changes.
expect 1 "$SPARKCTL" storage target --root "$R" --nqn $NQN --device /dev/nvme0n1 \
  --listen 198.18.0.1 --apply
contains "$TMP/err" "exists already"
expect 1 "$SPARKCTL" storage target --root "$R" --nqn $NQN.2 --device /dev/nvme0n1 \
  --listen 198.18.0.1 --apply
contains "$TMP/err" "198.18.0.1:4420 is served already by nvmet port 1 (subsystem $NQN)"
expect 1 "$SPARKCTL" storage target --root "$R" --nqn $NQN.2 --device /dev/nvme0n1 \
  --listen 198.18.0.1:4421 --port-id 1 --apply
contains "$TMP/err" "nvmet port 1 is used already"
# A device that is not there: one line, nothing made.
expect 2 "$SPARKCTL" storage target --root "$R" --nqn $NQN.2 --device /dev/nvme9n9 \
  --listen 198.18.0.1:4421 --apply
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "more than one line: $(cat "$TMP/err")"
contains "$TMP/err" "--device /dev/nvme9n9: no such device; nothing made"
listing "$TMP/now"
same "$TMP/made" "$TMP/now"

# A second target beside the first takes the next free port id.
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN.2 --device /dev/nvme0n1 \
  --listen 198.18.0.1:4421 --print
contains "$TMP/out" "mkdir '/sys/kernel/config/nvmet/ports/2'"

# A failure midway (the port's directory cannot be made: a file holds its
# name) undoes what was made before it, in reverse order.
: > "$CFS/nvmet/ports/7"
listing "$TMP/before"
expect 1 "$SPARKCTL" storage target --root "$R" --nqn $NQN.3 --null-blk 16M \
  --listen 198.18.0.1:4422 --port-id 7 --apply
contains "$TMP/err" "mkdir /sys/kernel/config/nvmet/ports/7: File exists; undone what was made"
listing "$TMP/now"
same "$TMP/before" "$TMP/now"
rm "$CFS/nvmet/ports/7"

# --remove tears it all down, and again finds nothing to remove.
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --remove --print
golden storage-target-remove.txt "$TMP/out"
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --remove
contains "$TMP/out" "removed subsystem $NQN"
listing "$TMP/now"
same "$TMP/empty" "$TMP/now"
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --remove
contains "$TMP/out" "nothing to remove"

# Parts already gone are passed over: a port link removed by hand.
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --device /dev/nvme0n1 \
  --listen '[fd00::1]:4420' --apply
[ "$(cat "$CFS/nvmet/ports/1/addr_adrfam")" = ipv6 ] || fail "adrfam of an IPv6 address"
contains "$TMP/out" "listening on tcp [fd00::1]:4420 (nvmet port 1)"
rm "$CFS/nvmet/ports/1/subsystems/$NQN"
expect 0 "$SPARKCTL" storage target --root "$R" --nqn $NQN --remove
[ ! -e "$CFS/nvmet/subsystems/$NQN" ] || fail "subsystem left behind"
[ -e "$R/dev/nvme0n1" ] || fail "the exported device was touched"

# Without nvmet-tcp loaded, --apply loads the modules; no modprobe is exit 3.
rm -r "$R/sys/module/nvmet_tcp"
mkdir "$TMP/bin"
expect 3 env PATH="$TMP/bin" "$SPARKCTL" storage target --root "$R" --nqn $NQN \
  --device /dev/nvme0n1 --listen 198.18.0.1 --apply
contains "$TMP/err" "modprobe nvmet-tcp: modprobe cannot run"
# A modprobe that fails says what it said.
printf '#!/bin/sh\necho "modprobe: FATAL: Module nvmet not found." >&2\nexit 1\n' > "$TMP/bin/modprobe"
chmod +x "$TMP/bin/modprobe"
expect 3 env PATH="$TMP/bin" "$SPARKCTL" storage target --root "$R" --nqn $NQN \
  --device /dev/nvme0n1 --listen 198.18.0.1 --apply
contains "$TMP/err" "Module nvmet not found"

# Usage errors.
expect 2 "$SPARKCTL" storage target --nqn $NQN --listen 198.18.0.1 --root "$R"
contains "$TMP/err" "give one of --device DEV and --null-blk SIZE"
expect 2 "$SPARKCTL" storage target --nqn 'not an nqn' --device /dev/x --listen 198.18.0.1 --root "$R"
contains "$TMP/err" "not an NQN (1 to 223 printable bytes without spaces, no '/')"
# A subsystem named outside the specification's nqn. form, as targets do: taken.
expect 0 "$SPARKCTL" storage target --nqn raid5-data --device /dev/x --listen 198.18.0.1 --root "$R"
contains "$TMP/out" "mkdir '/sys/kernel/config/nvmet/subsystems/raid5-data'"
expect 2 "$SPARKCTL" storage target --nqn $NQN --null-blk 12Q --listen 198.18.0.1 --root "$R"
expect 2 "$SPARKCTL" storage target --nqn $NQN --device /dev/x --listen 198.18.0.1:99999 --root "$R"
expect 2 "$SPARKCTL" storage target --nqn $NQN --device /dev/x --listen example.org --root "$R"
contains "$TMP/err" "not an IPv4 or IPv6 address"
# An NQN with '/' would not be one configfs name: refused, even to remove.
expect 2 "$SPARKCTL" storage target --nqn nqn.a/../../hosts --remove --root "$R"
contains "$TMP/err" "not an NQN"

# Loaded, but no nvmet directory: configfs is not mounted.
mv "$CFS/nvmet" "$TMP/nvmet-aside"
/bin/mkdir -p "$R/sys/module/nvmet_tcp"
expect 3 "$SPARKCTL" storage target --root "$R" --nqn $NQN --device /dev/nvme0n1 \
  --listen 198.18.0.1 --apply
contains "$TMP/err" "no /sys/kernel/config/nvmet: configfs is not mounted"
mv "$TMP/nvmet-aside" "$CFS/nvmet"
rmdir "$R/sys/module/nvmet_tcp"

# A modprobe that loads them (here: makes what the kernel would show) lets
# --apply go on; nvmet comes with nvmet-tcp.
cat > "$TMP/bin/modprobe" << EOF2
#!/bin/sh
echo "\$*" >> "$TMP/modprobe.args"
/bin/mkdir -p "$R/sys/module/nvmet_tcp"
EOF2
expect 0 env PATH="$TMP/bin" "$SPARKCTL" storage target --root "$R" --nqn $NQN \
  --device /dev/nvme0n1 --listen 198.18.0.1 --apply
[ "$(cat "$TMP/modprobe.args")" = nvmet-tcp ] || fail "modprobe $(cat "$TMP/modprobe.args")"
[ -d "$CFS/nvmet/subsystems/$NQN/namespaces/1" ] || fail "not made after modprobe"
