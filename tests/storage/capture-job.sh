# tests/storage/capture-job.sh - runs inside the storage VM (busybox sh) for
# shellcheck shell=sh
# tests/storage/capture-fixtures.sh: one target, one host, what nvme-cli,
# fio, sysfs, configfs and /proc say at each step, into /out/fixtures (a
# copy of tests/fixtures/storage/).  Every command's exit status is kept
# next to its output (NAME.rc), for the commands that may fail.
# shellcheck source=tests/storage/raw.sh
. /job/raw.sh
set -u

NQN=nqn.2026-11.io.sparkctl:shared
F=/out/fixtures
ROOT=$F/root
mkdir -p "$F" "$ROOT"

# cap NAME CMD...: CMD's stdout in $F/NAME, its stderr in $F/NAME.err when
# it printed any, its exit status in $F/NAME.rc when it is not 0.
cap() {
  _name=$1
  shift
  _rc=0
  "$@" > "$F/$_name" 2> "$F/$_name.err" || _rc=$?
  [ -s "$F/$_name.err" ] || rm -f "$F/$_name.err"
  [ "$_rc" = 0 ] || echo "$_rc" > "$F/$_name.rc"
  say "$* -> $_rc"
  return 0
}

# snap DIR: the readable attribute files of sysfs directory DIR (not its
# subdirectories) into $ROOT at the same path, the link to DIR from its
# class directory as it is (ls -l names the target).
snap() {
  _real=$(readlink -f "$1")
  mkdir -p "$ROOT$_real"
  for _f in "$_real"/*; do
    [ -f "$_f" ] && [ -r "$_f" ] || continue
    case ${_f##*/} in uevent | dev | delete_controller | reset_controller | rescan_controller) continue ;; esac
    cat "$_f" > "$ROOT$_f" 2> /dev/null || rm -f "$ROOT$_f"
  done
  # The links among them (a subsystem's controllers, a device's "device").
  for _f in "$_real"/*; do
    [ -L "$_f" ] && ln -sfn "$(readlink "$_f")" "$ROOT$_f"
  done
  if [ -L "$1" ]; then
    mkdir -p "$ROOT${1%/*}"
    ln -sfn "$(readlink "$1")" "$ROOT$1"
  fi
}

# --- the target: null_blk, nvmet through configfs
raw_null_blk nullb0 64
raw_target_up "$NQN" /dev/nullb0 127.0.0.1 4420
find "$CONFIGFS" | sort > "$F/nvmet-configfs-find.txt"
# The attributes' values (what storage target reads back).
for f in $(find "$CONFIGFS/nvmet" -type f | sort); do
  v=$(head -c 256 "$f" 2> /dev/null | head -n 1) || continue
  printf '%s\t%s\n' "$f" "$v"
done > "$F/nvmet-configfs-values.txt"

# --- the host
modprobe nvme-tcp || die "modprobe nvme-tcp"
cap discover.txt nvme discover -t tcp -a 127.0.0.1 -s 4420
cap discover.json nvme discover -t tcp -a 127.0.0.1 -s 4420 -o json
cap discover-refused.txt nvme discover -t tcp -a 127.0.0.1 -s 4421
cap list-subsys-none.json nvme list-subsys -o json
cap connect.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN"
wait_for 20 "a live controller" ctrl_live "$NQN"
cap connect-again.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN"
cap disconnect.txt nvme disconnect -n "$NQN"
wait_for 20 "the controller to go" sh -c "! ls /sys/class/nvme/nvme* > /dev/null 2>&1"
cap connect.json nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN" -o json
wait_for 20 "a live controller" ctrl_live "$NQN"
wait_for 20 "the namespace's device" ns_dev "$NQN"
DEV=$(ns_dev "$NQN")
CTRL=$(ctrl_of "$NQN")
say "controller $CTRL, namespace $DEV"
cap list-subsys.json nvme list-subsys -o json
cap list-subsys.txt nvme list-subsys
cap list.json nvme list -o json
cap list-subsys-ns.json nvme list-subsys -o json "$DEV"
cp /etc/nvme/hostnqn /etc/nvme/hostid "$F/"
mkdir -p "$ROOT/etc/nvme"
cp /etc/nvme/hostnqn /etc/nvme/hostid "$ROOT/etc/nvme/"
snap "/sys/class/nvme/$CTRL"
for s in /sys/class/nvme-subsystem/*; do snap "$s"; done
snap "/sys/class/block/${DEV#/dev/}"
mkdir -p "$ROOT/sys/class/block/${DEV#/dev/}/queue"
for q in logical_block_size physical_block_size max_sectors_kb rotational nr_requests scheduler; do
  cat "/sys/class/block/${DEV#/dev/}/queue/$q" > "$(readlink -f "$ROOT/sys/class/block/${DEV#/dev/}")/queue/$q" 2> /dev/null || :
done
ls -l /sys/class/nvme/ /sys/class/nvme-subsystem/ /sys/class/block/ > "$F/sysfs-class-links.txt"

# --- a filesystem on it, mounted by UUID
# A fixed UUID: a new capture changes no fixture that names it.
cap mkfs.txt mkfs.ext4 -q -F -U 3662c823-09f4-454a-a3a9-dee9ef3f9909 "$DEV"
UUID=$(by_uuid "$DEV")
cap blkid.txt blkid "$DEV"
mkdir -p /mnt/shared
mount_uuid "$UUID" /mnt/shared
cat /proc/mounts > "$F/proc-mounts.txt"
mkdir -p "$ROOT/proc" "$ROOT/dev/disk/by-uuid"
cp /proc/mounts "$ROOT/proc/mounts"
ln -s "../../${DEV#/dev/}" "$ROOT/dev/disk/by-uuid/$UUID"
printf 'UUID=%s /mnt/shared ext4 _netdev,nofail,noatime,x-systemd.requires=sparkctl-nvme-mnt-shared.service 0 0\n' "$UUID" > "$F/fstab"
mkdir -p "$ROOT/etc"
cp "$F/fstab" "$ROOT/etc/fstab"

# --- fio, the four profiles of storage bench (2 s each; 8 MiB per job for
# the 4-job profiles: the 64 MiB device holds about 57 MiB of files)
fio_cap() {
  _n=$1
  shift
  cap "fio-$_n.json" fio --output-format=json --name="$_n" --directory=/mnt/shared \
    --ioengine=libaio --direct=1 --time_based --runtime=2 --group_reporting "$@"
  rm -f /mnt/shared/"$_n".*
}
fio_cap seq-read --rw=read --bs=1M --iodepth=32 --numjobs=4 --size=8M
fio_cap seq-write --rw=write --bs=1M --iodepth=32 --numjobs=4 --size=8M
fio_cap rand4k-qd128 --rw=randread --bs=4k --iodepth=128 --numjobs=1 --size=16M
fio_cap lat-qd1 --rw=randread --bs=4k --iodepth=1 --numjobs=1 --size=16M
umount /mnt/shared || die "umount"
cap disconnect-2.txt nvme disconnect -n "$NQN"
wait_for 20 "the controller to go" sh -c "! ls /sys/class/nvme/nvme* > /dev/null 2>&1"
cap disconnect-none.txt nvme disconnect -n "$NQN"

# --- a second interface (dummy0, 198.18.0.2/24): the connection's source
# address shows in list-subsys ("src_addr") and sysfs "address".
modprobe dummy numdummies=0 || die "modprobe dummy"
ip link add dummy0 type dummy && ip addr add 198.18.0.2/24 dev dummy0 && ip link set dummy0 up || die "dummy0"
ip -o addr show > "$F/wrong-iface-ip-addr.txt"
# Bound to dummy0 (SO_BINDTODEVICE): 127.0.0.1 is not reachable through it.
cap wrong-iface-connect-host-iface.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN" -f dummy0
nvme disconnect -n "$NQN" > /dev/null 2>&1
# From dummy0's address: the path runs over lo, with dummy0's address as source.
cap wrong-iface-connect-host-traddr.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN" -w 198.18.0.2
wait_for 20 "a live controller" ctrl_live "$NQN"
cap wrong-iface-list-subsys-host-traddr.json nvme list-subsys -o json
CTRL=$(ctrl_of "$NQN")
cat "/sys/class/nvme/$CTRL/address" > "$F/wrong-iface-sysfs-address-host-traddr.txt"
# nvme-cli 2.3 sees the same traddr/trsvcid/NQN as connected whatever the
# source (even with --duplicate-connect).
cap wrong-iface-connect-lo-again.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN"
cap wrong-iface-disconnect-host-traddr.txt nvme disconnect -n "$NQN"
wait_for 20 "the controller to go" sh -c "! ls /sys/class/nvme/nvme* > /dev/null 2>&1"
# The plain connection: src_addr 127.0.0.1, on lo, not dummy0.
cap wrong-iface-connect-lo.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN"
wait_for 20 "a live controller" ctrl_live "$NQN"
cap wrong-iface-list-subsys-lo.json nvme list-subsys -o json
CTRL=$(ctrl_of "$NQN")
cat "/sys/class/nvme/$CTRL/address" > "$F/wrong-iface-sysfs-address-lo.txt"
# A second path to the same subsystem: the target listens on dummy0's
# address too (port 2); one subsystem, two controllers.
raw_port_add "$NQN" 198.18.0.2 4420 2
cap wrong-iface-connect-second-path.txt nvme connect -t tcp -a 198.18.0.2 -s 4420 -n "$NQN"
wait_for 20 "two controllers" sh -c "[ \$(ls -d /sys/class/nvme/nvme* | wc -l) = 2 ]"
cap wrong-iface-list-subsys-two-paths.json nvme list-subsys -o json
cap wrong-iface-list-subsys-two-paths.txt nvme list-subsys
cap wrong-iface-disconnect-two.txt nvme disconnect -n "$NQN"
wait_for 20 "the controllers to go" sh -c "! ls /sys/class/nvme/nvme* > /dev/null 2>&1"
raw_port_remove "$NQN" 2

# --- the target removed; the host connects to nothing
raw_target_down "$NQN"
find "$CONFIGFS" | sort > "$F/nvmet-configfs-find-removed.txt"
cap connect-no-target.txt nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN"
cap versions.txt sh -c 'uname -r; nvme version; fio --version'
say "done"
