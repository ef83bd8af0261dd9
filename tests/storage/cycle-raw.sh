# tests/storage/cycle-raw.sh - the storage cycle inside the VM (busybox sh)
# shellcheck shell=sh
# with nvme-cli and configfs alone, no sparkctl: what t1000-storage-vm.sh
# runs while sparkctl has no storage verbs.  It proves the rig: a target,
# a connection that is live, a file system made, mounted by UUID, written,
# and read back after a disconnect and a new connection, fio's JSON, and
# everything undone.  Files for the test to check are left in /out.
# shellcheck source=tests/storage/raw.sh
. /job/raw.sh
set -u
NQN=nqn.2026-11.io.sparkctl:cycle

# The build under test runs here (its libraries came along, a sanitizer's too).
sparkctl --version > /out/version || die "sparkctl does not run in the VM"
say "target: null_blk, nvmet on 127.0.0.1:4420"
raw_null_blk nullb0 64
raw_target_up "$NQN" /dev/nullb0 127.0.0.1 4420

say "discover, connect"
modprobe nvme-tcp || die "modprobe nvme-tcp"
nvme discover -t tcp -a 127.0.0.1 -s 4420 -o json > /out/discover.json || die "nvme discover"
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN" || die "nvme connect"
wait_for 30 "a live controller" ctrl_live "$NQN"
wait_for 30 "the namespace's device" ns_dev "$NQN"
DEV=$(ns_dev "$NQN")
nvme list-subsys -o json > /out/list-subsys.json || die "nvme list-subsys"

say "ext4 on $DEV, mounted by UUID"
mkfs.ext4 -q -F "$DEV" || die "mkfs.ext4 $DEV"
UUID=$(by_uuid "$DEV")
echo "$UUID" > /out/uuid
mkdir -p /mnt/shared
mount_uuid "$UUID" /mnt/shared
grep " /mnt/shared ext4 " /proc/mounts > /out/mounts || die "/mnt/shared is not in /proc/mounts"
dd if=/dev/urandom of=/mnt/shared/data bs=1M count=4 2> /dev/null || die "write /mnt/shared/data"
sha256sum < /mnt/shared/data > /out/data-written.sha256
fio --output-format=json --name=seq-read --directory=/mnt/shared --size=8M --ioengine=libaio --direct=1 \
  --rw=read --bs=1M --iodepth=32 --numjobs=4 --group_reporting --time_based --runtime=1 > /out/fio.json \
  || die "fio"
rm -f /mnt/shared/seq-read.*
umount /mnt/shared || die "umount"

say "disconnect, connect again, read the data back"
nvme disconnect -n "$NQN" > /out/disconnect.txt || die "nvme disconnect"
wait_for 30 "the controller to go" no_ctrl "$NQN"
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$NQN" || die "nvme connect (again)"
wait_for 30 "a live controller" ctrl_live "$NQN"
wait_for 30 "the namespace's device" ns_dev "$NQN"
UUID2=$(by_uuid "$(ns_dev "$NQN")")
[ "$UUID2" = "$UUID" ] || die "the file system's UUID changed: $UUID, then $UUID2"
mount_uuid "$UUID" /mnt/shared
sha256sum < /mnt/shared/data > /out/data-read.sha256
umount /mnt/shared || die "umount (again)"
nvme disconnect -n "$NQN" > /dev/null || die "nvme disconnect (again)"
wait_for 30 "the controller to go" no_ctrl "$NQN"

say "the target removed"
raw_target_down "$NQN"
{ ls /sys/kernel/config/nvmet/subsystems && ls /sys/kernel/config/nvmet/ports; } > /out/configfs-left.txt || die "cannot list nvmet in configfs"
say "done"
