# tests/storage/cycle.sh - the storage cycle inside the VM (busybox sh) with
# shellcheck shell=sh
# sparkctl's storage verbs, as docs/storage.md gives them: what
# t1000-storage-vm.sh runs once sparkctl has them.  The VM is the one node
# "vm" (its host name) and the target at once.  Each command's stdout,
# stderr and exit status are left in /out (NAME.out, NAME.err, NAME.rc) for
# the test to check; the job stops at the first unexpected exit status.
# shellcheck source=tests/storage/raw.sh
. /job/raw.sh
set -u
NQN=nqn.2026-11.io.sparkctl:cycle

# sk NAME STATUS ARGS...: run 'sparkctl ARGS'; it must exit STATUS.
sk() {
  _n=$1 _want=$2
  shift 2
  _rc=0
  sparkctl "$@" > "/out/$_n.out" 2> "/out/$_n.err" || _rc=$?
  echo "$_rc" > "/out/$_n.rc"
  say "sparkctl $* -> $_rc"
  if [ "$_rc" != "$_want" ]; then
    echo "--- stdout:"
    cat "/out/$_n.out"
    echo "--- stderr:"
    cat "/out/$_n.err"
    die "sparkctl $* exited $_rc, expected $_want"
  fi
}

# The build under test runs here (its libraries came along, a sanitizer's too).
sparkctl --version > /out/version || die "sparkctl does not run in the VM"
say "target"
sk target 0 storage target --nqn "$NQN" --null-blk 64M --listen 127.0.0.1:4420 --apply
[ -d "$CONFIGFS/nvmet/subsystems/$NQN" ] || die "no subsystem $NQN in configfs after target --apply"
ls -d "$CONFIGFS"/nvmet/ports/*/subsystems/"$NQN" > /dev/null 2>&1 || die "no port exposes $NQN"

say "connect: no target at the port, a subsystem the target does not offer"
sk connect-down 3 storage connect --target 127.0.0.1:4421 --nqn "$NQN" --connect-timeout 20
sk connect-wrong 3 storage connect --target 127.0.0.1 --nqn "$NQN-wrong" --connect-timeout 20
no_ctrl "$NQN-wrong" || die "a controller is left after a refused connect"

say "connect"
sk connect 0 storage connect --target 127.0.0.1 --nqn "$NQN" --json
ctrl_live "$NQN" || die "connect returned without a live controller of $NQN"
wait_for 30 "the namespace's device" ns_dev "$NQN"
DEV=$(ns_dev "$NQN")
echo "$DEV" > /out/dev

say "ext4 on $DEV, the plan written, mounted by UUID"
mkfs.ext4 -q -F "$DEV" || die "mkfs.ext4 $DEV"
UUID=$(by_uuid "$DEV")
echo "$UUID" > /out/uuid
sk plan 0 storage plan --target 127.0.0.1 --nqn "$NQN" --mount /mnt/shared --uuid "$UUID" \
  --nodes vm --writer vm --write --root /
[ -f /etc/sparkctl/storage.d/mnt-shared.json ] || die "plan --write wrote no /etc/sparkctl/storage.d/mnt-shared.json"
cp /etc/sparkctl/storage.d/mnt-shared.json /out/storage.json
cp /etc/fstab /out/fstab
grep -q "^UUID=$UUID /mnt/shared ext4 .*nofail" /etc/fstab || die "no fstab line for UUID=$UUID with nofail"
mkdir -p /mnt/shared
mount_uuid "$UUID" /mnt/shared
grep " /mnt/shared ext4 " /proc/mounts > /out/mounts || die "/mnt/shared is not in /proc/mounts"
dd if=/dev/urandom of=/mnt/shared/data bs=1M count=4 2> /dev/null || die "write /mnt/shared/data"
sha256sum < /mnt/shared/data > /out/data-written.sha256

say "check, bench"
sk check 0 storage check --json
sk bench 0 storage bench /mnt/shared --profiles seq-read,seq-write --size 16M --runtime 2 --json

say "fault: the plan's interface is dummy0, the path leaves from lo"
modprobe dummy numdummies=0 || die "modprobe dummy"
ip link add dummy0 type dummy && ip addr add 198.18.0.2/24 dev dummy0 && ip link set dummy0 up \
  || die "cannot make dummy0"
cp /etc/fstab /tmp/fstab.good
sk plan-iface 0 storage plan --target 127.0.0.1 --nqn "$NQN" --mount /mnt/shared --uuid "$UUID" \
  --nodes vm --writer vm --iface dummy0 --write --root /
sk check-iface 4 storage check --json
sk plan-again 0 storage plan --target 127.0.0.1 --nqn "$NQN" --mount /mnt/shared --uuid "$UUID" \
  --nodes vm --writer vm --write --root /

say "fault: nofail gone from fstab"
sed -i "/^UUID=$UUID /s/nofail,//; /^UUID=$UUID /s/,nofail//" /etc/fstab
grep "^UUID=$UUID " /etc/fstab > /out/fstab-without-nofail
grep -q nofail /out/fstab-without-nofail && die "nofail is still in the fstab line"
sk check-nofail 4 storage check --json
cp /tmp/fstab.good /etc/fstab
sk check-restored 0 storage check --json

say "disconnect, connect again, read the data back"
umount /mnt/shared || die "umount"
sk disconnect 0 storage disconnect --nqn "$NQN"
wait_for 30 "the controller to go" no_ctrl "$NQN"
sk connect-again 0 storage connect --target 127.0.0.1 --nqn "$NQN"
wait_for 30 "a live controller" ctrl_live "$NQN"
wait_for 30 "the namespace's device" ns_dev "$NQN"
[ "$(by_uuid "$(ns_dev "$NQN")")" = "$UUID" ] || die "the file system's UUID changed"
mount_uuid "$UUID" /mnt/shared
sha256sum < /mnt/shared/data > /out/data-read.sha256
umount /mnt/shared || die "umount (again)"
sk disconnect-again 0 storage disconnect --nqn "$NQN"
no_ctrl "$NQN" || die "a controller of $NQN is left after disconnect"

say "the target removed"
sk remove 0 storage target --nqn "$NQN" --remove
# What is left of subsystems, ports and null_blk devices (directories all).
find "$CONFIGFS/nvmet/subsystems" "$CONFIGFS/nvmet/ports" "$CONFIGFS/nullb" -mindepth 1 -maxdepth 1 -type d \
  > /out/configfs-left.txt || die "cannot list configfs"
say "done"
