# tests/storage/raw.sh - sourced inside the storage VM (busybox sh): an
# shellcheck shell=sh
# NVMe/TCP target and host made with nvme-cli and configfs directly, the
# way an administrator would without sparkctl.  The raw cycle of
# t1000-storage-vm.sh and tests/storage/capture-fixtures.sh use it; the
# verb cycle (cycle.sh) does the same through sparkctl's verbs.

CONFIGFS=/sys/kernel/config

# say WHAT...: a line in the job's log, so a failure shows how far it got.
say() { echo "## $*"; }
# die WHAT...: the job fails.
die() {
  echo "FAIL: $*"
  exit 1
}

# wait_for SECONDS WHAT CMD...: poll CMD (every 0.1 s) until it succeeds;
# fail after SECONDS.  There is no udev in the VM: devices appear when the
# kernel has made them, a moment after the command that asked for them.
wait_for() {
  _limit=$(($1 * 10)) _what=$2 _i=0
  shift 2
  while ! "$@" > /dev/null 2>&1; do
    _i=$((_i + 1))
    [ "$_i" -le "$_limit" ] || die "timed out waiting for $_what"
    sleep 0.1
  done
}

# raw_null_blk NAME MIB: a memory-backed null_blk device /dev/NAME of MIB
# MiB, made through configfs (memory-backed, so what is written reads back;
# the module's own devices discard writes).
raw_null_blk() {
  modprobe null_blk nr_devices=0 || die "modprobe null_blk"
  _d=$CONFIGFS/nullb/$1
  mkdir "$_d" || die "mkdir $_d"
  echo "$2" > "$_d/size"
  echo 1 > "$_d/memory_backed"
  echo 4096 > "$_d/blocksize"
  echo 1 > "$_d/power"
  wait_for 10 "/dev/$1" test -b "/dev/$1"
}

# raw_target_up NQN DEVICE ADDR PORT [PORTID]: an nvmet subsystem NQN (any
# host may connect) with DEVICE as namespace 1, on a TCP port listening on
# ADDR:PORT.
raw_target_up() {
  modprobe nvmet-tcp || die "modprobe nvmet-tcp"
  _s=$CONFIGFS/nvmet/subsystems/$1
  mkdir "$_s" || die "mkdir $_s"
  echo 1 > "$_s/attr_allow_any_host"
  mkdir "$_s/namespaces/1"
  echo "$2" > "$_s/namespaces/1/device_path"
  echo 1 > "$_s/namespaces/1/enable" || die "cannot enable namespace 1 ($2)"
  raw_port_add "$1" "$3" "$4" "${5:-1}"
}

# raw_port_add NQN ADDR PORT PORTID: subsystem NQN on a TCP port (configfs
# port PORTID) listening on ADDR:PORT.
raw_port_add() {
  _p=$CONFIGFS/nvmet/ports/$4
  mkdir "$_p" || die "mkdir $_p"
  echo tcp > "$_p/addr_trtype"
  echo ipv4 > "$_p/addr_adrfam"
  echo "$2" > "$_p/addr_traddr"
  echo "$3" > "$_p/addr_trsvcid"
  ln -s "$CONFIGFS/nvmet/subsystems/$1" "$_p/subsystems/$1" || die "cannot expose $1 on port $4"
}

# raw_port_remove NQN PORTID: undo raw_port_add.
raw_port_remove() {
  rm "$CONFIGFS/nvmet/ports/$2/subsystems/$1" && rmdir "$CONFIGFS/nvmet/ports/$2" || die "cannot remove port $2"
}

# raw_target_down NQN [PORTID]: undo raw_target_up (the reverse order:
# configfs refuses to remove what is still linked or enabled).
raw_target_down() {
  _s=$CONFIGFS/nvmet/subsystems/$1
  raw_port_remove "$1" "${2:-1}"
  echo 0 > "$_s/namespaces/1/enable"
  rmdir "$_s/namespaces/1" && rmdir "$_s" || die "cannot remove $1"
}

# ctrl_of NQN: the controller (nvmeN) connected to subsystem NQN, if any.
ctrl_of() {
  for _c in /sys/class/nvme/nvme*; do
    [ -e "$_c/subsysnqn" ] || continue
    [ "$(cat "$_c/subsysnqn")" = "$1" ] && echo "${_c##*/}" && return 0
  done
  return 1
}

# no_ctrl NQN: no controller is connected to subsystem NQN.
no_ctrl() { ! ctrl_of "$1" > /dev/null; }

# ctrl_live NQN: a controller of subsystem NQN is "live".
ctrl_live() {
  _c=$(ctrl_of "$1") || return 1
  [ "$(cat "/sys/class/nvme/$_c/state")" = live ]
}

# ns_dev NQN: the block device of namespace 1 of subsystem NQN (nvmeXnY:
# the X is the subsystem's instance, not the controller's).
ns_dev() {
  for _b in /sys/class/nvme-subsystem/nvme-subsys*; do
    [ "$(cat "$_b/subsysnqn" 2> /dev/null)" = "$1" ] || continue
    for _n in "$_b"/nvme*n1; do
      [ -e "$_n" ] && echo "/dev/${_n##*/}" && return 0
    done
  done
  return 1
}

# by_uuid DEVICE: make /dev/disk/by-uuid/UUID -> ../../NAME for the
# filesystem on DEVICE, as udev does on a node; prints the UUID.
by_uuid() {
  _u=$(blkid -s UUID -o value "$1") || die "blkid $1"
  [ -n "$_u" ] || die "no UUID on $1"
  mkdir -p /dev/disk/by-uuid
  ln -sf "../../${1##*/}" "/dev/disk/by-uuid/$_u"
  echo "$_u"
}

# mount_uuid UUID DIR: mount the ext4 file system UUID on DIR (noatime), as
# mount(8) does for "UUID=..." in fstab: it resolves /dev/disk/by-uuid/UUID
# and hands the kernel the device itself, so /proc/mounts names /dev/nvmeXnY
# (busybox's mount would pass the link's path on, which a node never shows).
mount_uuid() {
  _dev=$(readlink -f "/dev/disk/by-uuid/$1") || die "no /dev/disk/by-uuid/$1"
  mount -t ext4 -o noatime "$_dev" "$2" || die "mount UUID=$1 ($_dev) on $2"
}
