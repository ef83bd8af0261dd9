# tests/storage/vm.sh - a small Linux VM in which the NVMe/TCP tests run a
# shellcheck shell=bash
# real target and a real host: sourced after tests/lib.sh.
#
#   . "$SRCDIR/tests/lib.sh"
#   . "$SRCDIR/tests/storage/vm.sh"
#   vm_require                        # qemu, the kernel, the tools ... or skip
#   vm_build                          # the VM's root file system (initramfs)
#   vm_add "$SRCDIR/tests/storage/cycle.sh" /job/cycle.sh
#   vm_run "$TMP/job.sh" 240          # boot, run the job, power off
#   [ "$VM_STATUS" = 0 ] || fail ...   # its exit status; $VM_OUT/log its output
#
# Why a VM: NVMe over TCP needs the kernel's nvme-tcp (host) and nvmet,
# nvmet-tcp (target) modules, configfs and null_blk; the machines the tests
# run on may have none of them and may not load modules, and nested KVM is
# not to be relied on.  So the tests boot Debian's own kernel (the
# linux-image-amd64 package, extracted by scripts/setup into
# $VM_KERNEL_CACHE, never installed on the host) under QEMU's software
# emulation (TCG: slow, but it needs nothing from the host) with an
# initramfs as the only file system.  Target and host are the same VM: the
# target listens on 127.0.0.1:4420 and the host connects to it over
# loopback, which goes through the very same nvme-tcp and nvmet-tcp code as
# a cable between two nodes.  Nothing of it touches the host: no network,
# no mounts, no modules; QEMU runs as an ordinary process without a network
# device.
#
# The initramfs ($VM_ROOT, packed with busybox cpio) holds:
#   /bin/busybox (static) and a link for each applet (sh, mount, modprobe,
#     ip, ...), /init (below);
#   /lib/modules/VERSION/ the kernel modules the tests need, with every
#     module they depend on (modinfo's "depends"), uncompressed; modules.dep
#     is made at boot by busybox's depmod, so modprobe works there as on a
#     node (the kernel itself calls /sbin/modprobe for crypto modules);
#   nvme (nvme-cli), fio, mkfs.ext4, blkid, and $SPARKCTL (the build under
#     test, an AddressSanitizer build too) as /usr/bin/sparkctl, each with
#     every shared library ldd lists, the dynamic loader included;
#   /etc/nvme/hostnqn, /etc/nvme/hostid ($VM_HOSTNQN, $VM_HOSTID): what
#     nvme-cli's package makes on a node;
#   /job/job.sh: the test's script, and what vm_add put there.
#
# /init mounts /proc, /sys, /dev (devtmpfs), /tmp, /run and configfs (as
# systemd does on a node), loads ext4 (a node's root is on it), names the host "vm", brings lo up, and mounts
# the test's out directory ($VM_OUT on the host, /out in the VM) over 9p
# (virtio).  It runs /job/job.sh with /out/log as its stdout and stderr
# and the environment of $VM_ENV, writes the exit status to /out/status
# (through a rename, so a half-written status is never read), unmounts /out
# and powers off.  Any file the job writes under /out is on the host once
# vm_run returns.  A VM that does not power off within vm_run's time limit
# is killed, and the test fails; so does one that ends without a status.
# The test's exit (however it ends) kills a VM still running: nothing is
# left behind.
#
# With vm_use_systemd after vm_build, /init mounts the same and then execs
# systemd (this host's, copied in with systemctl and systemd-run), which
# runs the job as a service: a node whose init is systemd.
#
# With vm_use_systemd_logind USER UID after vm_use_systemd, it runs the
# D-Bus system bus and systemd-logind too, and logind starts USER's manager
# (user@UID.service) at boot: a node where USER lingers.
#
# Functions: vm_require, vm_build, vm_use_systemd, vm_use_systemd_logind
#   USER UID, vm_add SRC DEST, vm_run SCRIPT [SECONDS], vm_job_failed WHAT.
# Variables: VM_KERNEL_CACHE (where scripts/setup puts the kernel),
#   VM_KVER, VM_KERNEL (after vm_require), VM_ROOT, VM_OUT, VM_STATUS,
#   VM_CONSOLE (the serial console's log: the kernel's messages),
#   VM_SECONDS (how long the last boot-to-power-off took), VM_ENV (NAME=VALUE
#   words exported to the job), VM_MEMORY (MiB).
# SPARKCTL_VM_KEEP=DIR keeps the last VM's console log and out directory in
# DIR when the test ends.

VM_KERNEL_CACHE=${SPARKCTL_VM_KERNEL_CACHE:-/var/cache/sparkctl-test/kernel}
VM_DIR=$TMP/vm
VM_ROOT=$VM_DIR/root
VM_OUT=$VM_DIR/out
VM_CONSOLE=$VM_DIR/console.log
VM_MEMORY=${VM_MEMORY:-1024}
VM_STATUS=""
VM_SECONDS=""
VM_ENV=""
VM_KVER=""
VM_KERNEL=""
VM_MODULES=""
# A fixed host identity, so captured outputs are the same from run to run.
VM_HOSTID=${VM_HOSTID:-5f1c2a9e-7d40-4b8e-9a51-0c3d6e2f8a17}
VM_HOSTNQN=${VM_HOSTNQN:-nqn.2014-08.org.nvmexpress:uuid:$VM_HOSTID}
# The kernel modules the tests load; their dependencies come along.
# crc32c_generic: ext4's checksums (a soft dependency, which modinfo's
# "depends" does not name); 9p, 9pnet_virtio, virtio_pci: the out directory.
VM_WANT_MODULES="configfs null_blk nvmet nvmet-tcp nvme-tcp nvme-fabrics ext4 crc32c_generic dummy 9p 9pnet_virtio virtio_pci"
# The programs the job may run, besides busybox's applets.
VM_PROGRAMS="nvme fio mkfs.ext4 blkid"
_vm_qemu_pid=""

# _vm_missing WHY: skip the test, or fail it where the run requires every
# test to run (SPARKCTL_REQUIRE_ROOT_TESTS=1, as scripts/setup sets it in
# CI): a rig that silently skips there would test nothing.
_vm_missing() {
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "$1, and this run requires every test (run scripts/setup test)"
  skip "$1"
}

# vm_require: skip (or fail) unless this machine has QEMU, a static busybox,
# the tools and the kernel that scripts/setup puts in $VM_KERNEL_CACHE.
# Sets VM_KVER and VM_KERNEL.
vm_require() {
  local c m k
  command -v qemu-system-x86_64 > /dev/null 2>&1 || _vm_missing "no qemu-system-x86_64 (Debian package qemu-system-x86)"
  [ -x /bin/busybox ] || _vm_missing "no /bin/busybox (Debian package busybox-static)"
  # Debian's busybox package is dynamic; only busybox-static runs in the VM.
  if ldd /bin/busybox > /dev/null 2>&1; then
    _vm_missing "/bin/busybox is not static (Debian package busybox-static)"
  fi
  for c in $VM_PROGRAMS modinfo ldd timeout; do
    command -v "$c" > /dev/null 2>&1 || _vm_missing "no '$c' command (scripts/setup installs it)"
  done
  # The newest kernel of the cache (one per package version, each as
  # dpkg-deb -x left it).
  VM_KERNEL=""
  for k in "$VM_KERNEL_CACHE"/*/boot/vmlinuz-*; do
    [ -f "$k" ] && VM_KERNEL=$k
  done
  [ -n "$VM_KERNEL" ] || _vm_missing "no kernel in $VM_KERNEL_CACHE (scripts/setup test extracts linux-image-amd64 there)"
  [ -r "$VM_KERNEL" ] || _vm_missing "cannot read $VM_KERNEL"
  VM_KVER=${VM_KERNEL##*/vmlinuz-}
  VM_MODULES=${VM_KERNEL%/boot/*}/lib/modules/$VM_KVER
  [ -d "$VM_MODULES/kernel" ] || _vm_missing "no modules of $VM_KVER in ${VM_MODULES%/*}"
  for m in $VM_WANT_MODULES; do
    [ -n "$(_vm_module_path "$m")" ] || _vm_missing "the kernel $VM_KVER has no module $m"
  done
}

# _vm_module_path NAME: the module's file under $VM_MODULES (relative), or
# nothing.  Names compare with '-' and '_' alike, as modprobe does.
_vm_module_path() {
  local want=${1//-/_}
  [ -f "$VM_DIR/modules.index" ] || {
    mkdir -p "$VM_DIR"
    # "name path" for every module file.
    (cd "$VM_MODULES" && find kernel -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz') \
      | awk '{ n = $0; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n); gsub(/-/, "_", n); print n, $0 }' \
        > "$VM_DIR/modules.index"
  }
  awk -v n="$want" '$1 == n { print $2; exit }' "$VM_DIR/modules.index"
}

# _vm_copy_module PATH: copy one module file (relative to $VM_MODULES) into
# the initramfs, uncompressed: busybox's insmod reads plain .ko files only.
_vm_copy_module() {
  local src=$VM_MODULES/$1 dst=$VM_ROOT/lib/modules/$VM_KVER/${1%.ko*}.ko
  mkdir -p "${dst%/*}"
  case $1 in
  *.ko) cp "$src" "$dst" ;;
  *.ko.xz) xz -dc "$src" > "$dst" ;;
  *.ko.zst) zstd -qdc "$src" > "$dst" ;;
  *.ko.gz) gzip -dc "$src" > "$dst" ;;
  esac || fail "cannot copy the module $1 into the VM"
}

# _vm_copy_modules NAME...: the modules and, transitively, all they depend on.
_vm_copy_modules() {
  local -A seen=()
  local queue=("$@") name path dep
  while [ ${#queue[@]} -gt 0 ]; do
    name=${queue[0]//-/_}
    queue=("${queue[@]:1}")
    [ -z "${seen[$name]:-}" ] || continue
    seen[$name]=1
    path=$(_vm_module_path "$name")
    if [ -z "$path" ]; then
      # Built into the kernel: nothing to copy.
      grep -q "/${name}.ko\$\|/${name//_/-}.ko\$" "$VM_MODULES/modules.builtin" 2> /dev/null && continue
      fail "the VM's kernel has no module $name"
    fi
    _vm_copy_module "$path"
    for dep in $(modinfo -F depends "$VM_MODULES/$path" | tr ',' ' '); do
      queue+=("$dep")
    done
  done
  cp "$VM_MODULES/modules.builtin" "$VM_MODULES/modules.order" "$VM_ROOT/lib/modules/$VM_KVER/" 2> /dev/null || :
}

# _vm_copy_program PATH [DEST]: a program and every shared library that ldd
# lists for it (the loader too), at the same paths in the VM.
_vm_copy_program() {
  local src=$1 dst=${2:-$1} lib
  mkdir -p "$VM_ROOT${dst%/*}"
  # Not through a link to busybox there (/bin/busybox, which is this host's
  # path too).
  rm -f "$VM_ROOT$dst"
  cp -L "$src" "$VM_ROOT$dst" || fail "cannot copy $src into the VM"
  # "libx.so => /path (addr)", "/lib64/ld-linux-x86-64.so.2 (addr)";
  # linux-vdso has no file.
  for lib in $(ldd "$src" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    [ -e "$VM_ROOT$lib" ] && continue
    mkdir -p "$VM_ROOT${lib%/*}"
    cp -L "$lib" "$VM_ROOT$lib" || fail "cannot copy $lib into the VM"
  done
}

# vm_build: make the VM's root file system in $VM_ROOT (see the top of this
# file).  Call after vm_require; vm_add and vm_run come after it.
vm_build() {
  local a p
  rm -rf "$VM_ROOT"
  mkdir -p "$VM_ROOT"/{bin,sbin,usr/bin,usr/sbin,etc/nvme,proc,sys,dev,tmp,run,out,mnt,job,root,var/tmp}
  cp /bin/busybox "$VM_ROOT/bin/busybox"
  for a in $(/bin/busybox --list-full); do
    [ -e "$VM_ROOT/$a" ] || ln -s /bin/busybox "$VM_ROOT/$a"
  done
  _vm_copy_modules $VM_WANT_MODULES
  for p in $VM_PROGRAMS; do
    _vm_copy_program "$(command -v "$p")" "/usr/sbin/$p"
  done
  _vm_copy_program "$SPARKCTL" /usr/bin/sparkctl
  echo "$VM_HOSTNQN" > "$VM_ROOT/etc/nvme/hostnqn"
  echo "$VM_HOSTID" > "$VM_ROOT/etc/nvme/hostid"
  echo "vm" > "$VM_ROOT/etc/hostname"
  printf 'root:x:0:0:root:/root:/bin/sh\n' > "$VM_ROOT/etc/passwd"
  printf 'root:x:0:\n' > "$VM_ROOT/etc/group"
  printf '127.0.0.1 localhost\n127.0.1.1 vm\n' > "$VM_ROOT/etc/hosts"
  : > "$VM_ROOT/etc/fstab"
  : > "$VM_ROOT/etc/mtab"
  mkdir -p "$VM_ROOT/lib/vm"
  cat > "$VM_ROOT/lib/vm/mount.sh" <<'EOF'
# Sourced by the VM's init (tests/storage/vm.sh): mount what a node has
# mounted and the out directory; false when /out cannot be mounted.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
hostname -F /etc/hostname
ip link set lo up
depmod
# A node's root file system is ext4: the module is there before any mount.
modprobe ext4
modprobe configfs && mount -t configfs configfs /sys/kernel/config
# What a vm_use_* function adds to the boot.
[ ! -f /lib/vm/setup.sh ] || . /lib/vm/setup.sh
modprobe virtio_pci && modprobe 9pnet_virtio && modprobe 9p &&
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out
EOF
  cat > "$VM_ROOT/lib/vm/run-job.sh" <<'EOF'
# The job, its output and exit status in /out (tests/storage/vm.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
[ -f /job/env ] && . /job/env
cd /job
sh /job/job.sh > /out/log 2>&1
echo $? > /out/status.new
mv /out/status.new /out/status
sync
umount /out
EOF
  cat > "$VM_ROOT/init" <<'EOF'
#!/bin/sh
# The VM's init (tests/storage/vm.sh): mount, run the job, power off.
if . /lib/vm/mount.sh; then
  sh /lib/vm/run-job.sh
else
  echo "vm: cannot mount the out directory" > /dev/console
fi
poweroff -f
EOF
  chmod 755 "$VM_ROOT/init"
}

# vm_use_systemd: after vm_build, the VM boots systemd (Debian's, from this
# host) as its init, as a node does, and systemd runs the job as a service
# (vm-job.service), which powers the VM off at its end.  No
# journald, no D-Bus: root's systemctl and systemd-run reach systemd
# through its private socket.
vm_use_systemd() {
  local p d=$VM_ROOT/etc/systemd/system
  _vm_copy_program /lib/systemd/systemd
  for p in systemd-run systemctl; do
    _vm_copy_program "$(command -v "$p")" "/usr/bin/$p"
  done
  mkdir -p "$d"
  # An empty machine-id: systemd makes one for this boot.
  : > "$VM_ROOT/etc/machine-id"
  printf 'ID=debian\nNAME="sparkctl test VM"\n' > "$VM_ROOT/etc/os-release"
  printf '[Unit]\nDescription=the test job\nWants=vm-job.service\nAllowIsolate=yes\n' \
    > "$d/vm-job.target"
  ln -sf vm-job.target "$d/default.target"
  cat > "$d/vm-job.service" <<'EOF'
[Unit]
Description=the test job (tests/storage/vm.sh)
DefaultDependencies=no

[Service]
Type=oneshot
StandardOutput=null
StandardError=null
ExecStart=/bin/sh -c 'sh /lib/vm/run-job.sh; poweroff -f'
EOF
  cat > "$VM_ROOT/init" <<'EOF'
#!/bin/sh
# The VM's init (tests/storage/vm.sh, vm_use_systemd): mount, then systemd.
. /lib/vm/mount.sh || { echo "vm: cannot mount the out directory" > /dev/console; poweroff -f; }
exec /lib/systemd/systemd
EOF
  chmod 755 "$VM_ROOT/init"
}

# vm_use_systemd_logind USER UID: after vm_use_systemd, the VM runs what a
# node runs for its users' logins too: the D-Bus system bus (dbus.socket,
# dbus.service), systemd-logind, and for USER (uid and gid UID, home
# /home/USER) a linger file, so that logind starts the user's manager
# (user@UID.service: PAM service systemd-user, Delegate=yes) and
# /run/user/UID at boot, as 'loginctl enable-linger USER' makes it do on a
# node; the user's manager runs the user's bus (/run/user/UID/bus).  All of
# it is this host's (Debian's systemd, dbus, libpam-systemd, libpam-modules):
# programs, units, the bus's configuration, the PAM configuration and
# modules.  /usr/bin/setpriv (util-linux's) runs the job's part as USER.
vm_use_systemd_logind() {
  local user=$1 uid=$2 p m u sec sd=$VM_ROOT/etc/systemd/system ud=$VM_ROOT/usr/lib/systemd/user
  for p in /lib/systemd/systemd-logind /lib/systemd/systemd-user-runtime-dir \
    /usr/bin/dbus-daemon; do
    _vm_copy_program "$p"
  done
  # util-linux's, at /usr/bin: busybox's applet is /bin/setpriv.
  _vm_copy_program "$(command -v setpriv)" /usr/bin/setpriv
  # dbus.socket's ExecStartPost names /bin/systemctl.
  ln -sf /usr/bin/systemctl "$VM_ROOT/bin/systemctl"
  # The PAM modules are loaded with dlopen (ldd of them, not of systemd),
  # from "security" beside libpam (as ldd of systemd names it).
  sec=$(ldd /lib/systemd/systemd | awk '$1 ~ /^libpam\.so/ { print $3 }')
  sec=${sec%/*}/security
  [ -f "$sec/pam_systemd.so" ] || fail "no $sec/pam_systemd.so (Debian package libpam-systemd)"
  for m in pam_unix pam_deny pam_permit pam_selinux pam_loginuid pam_limits pam_keyinit pam_systemd; do
    _vm_copy_program "$sec/$m.so"
  done
  mkdir -p "$VM_ROOT/etc/pam.d" "$VM_ROOT/etc/security" "$VM_ROOT/lib/systemd/system" "$ud"
  for p in /usr/lib/pam.d/systemd-user /etc/pam.d/systemd-user; do
    [ -f "$p" ] && cp "$p" "$VM_ROOT/etc/pam.d/systemd-user"
  done
  [ -f "$VM_ROOT/etc/pam.d/systemd-user" ] || fail "no PAM configuration systemd-user (Debian package systemd)"
  for p in common-account common-session-noninteractive; do
    cp "/etc/pam.d/$p" "$VM_ROOT/etc/pam.d/$p" || fail "no /etc/pam.d/$p (Debian package libpam-runtime)"
  done
  # pam_limits reads it: no limits.
  : > "$VM_ROOT/etc/security/limits.conf"
  # The units, at the paths this host's systemd looks for them; the targets
  # that services with the default dependencies (dbus.service,
  # user-runtime-dir@.service) need, without what they want on a node.
  for u in dbus.service dbus.socket systemd-logind.service user-runtime-dir@.service \
    user@.service user.slice user-.slice.d user@.service.d sysinit.target basic.target \
    sockets.target timers.target paths.target slices.target local-fs.target swap.target \
    shutdown.target nss-user-lookup.target; do
    cp -a "/lib/systemd/system/$u" "$VM_ROOT/lib/systemd/system/" || fail "no unit $u"
  done
  ln -sf systemd-logind.service "$VM_ROOT/lib/systemd/system/dbus-org.freedesktop.login1.service"
  for u in default.target basic.target sockets.target paths.target timers.target \
    shutdown.target exit.target systemd-exit.service app.slice background.slice \
    session.slice dbus.service dbus.socket; do
    cp "/usr/lib/systemd/user/$u" "$ud/" || fail "no user unit $u"
  done
  mkdir -p "$ud/sockets.target.wants"
  ln -sf ../dbus.socket "$ud/sockets.target.wants/dbus.socket"
  # The bus's configuration and the policies of the services on it.
  mkdir -p "$VM_ROOT/usr/share/dbus-1/system.d" "$VM_ROOT/usr/share/dbus-1/system-services" \
    "$VM_ROOT/usr/share/dbus-1/services" "$VM_ROOT/etc/dbus-1"
  cp /usr/share/dbus-1/system.conf /usr/share/dbus-1/session.conf "$VM_ROOT/usr/share/dbus-1/"
  cp /usr/share/dbus-1/system.d/org.freedesktop.login1.conf \
    /usr/share/dbus-1/system.d/org.freedesktop.systemd1.conf "$VM_ROOT/usr/share/dbus-1/system.d/"
  # No journald: what the services write goes to the console ($VM_CONSOLE),
  # where a failing test shows it.
  mkdir -p "$VM_ROOT/etc/systemd/system.conf.d"
  printf '[Manager]\nDefaultStandardOutput=tty\nDefaultStandardError=tty\n' \
    > "$VM_ROOT/etc/systemd/system.conf.d/vm-console.conf"
  # The job's target brings up the bus and logind as multi-user.target does.
  printf 'Wants=dbus.socket systemd-logind.service\n' >> "$sd/vm-job.target"
  printf 'messagebus:x:100:101::/nonexistent:/bin/false\n%s:x:%s:%s::/home/%s:/bin/sh\n' \
    "$user" "$uid" "$uid" "$user" >> "$VM_ROOT/etc/passwd"
  printf 'messagebus:x:101:\n%s:x:%s:\n' "$user" "$uid" >> "$VM_ROOT/etc/group"
  printf 'root:*:19000:0:99999:7:::\n%s:*:19000:0:99999:7:::\n' "$user" > "$VM_ROOT/etc/shadow"
  chmod 640 "$VM_ROOT/etc/shadow"
  mkdir -p "$VM_ROOT/home/$user" "$VM_ROOT/var/lib/systemd/linger"
  : > "$VM_ROOT/var/lib/systemd/linger/$user"
  # The initramfs is packed as root's: the home is the user's from boot on.
  printf 'chown %s:%s /home/%s\n' "$uid" "$uid" "$user" >> "$VM_ROOT/lib/vm/setup.sh"
}

# vm_job_failed WHAT: the job in the VM failed: its output and the end of
# the VM's console, then the test fails saying WHAT.
vm_job_failed() {
  echo "--- the job's output:" >&2
  cat "$VM_OUT/log" >&2
  echo "--- the VM's console (last 30 lines):" >&2
  tail -n 30 "$VM_CONSOLE" >&2
  fail "$1 (the job in the VM exited $VM_STATUS)"
}

# vm_add SRC DEST: put the file SRC into the VM at DEST (a path under /).
vm_add() {
  mkdir -p "$VM_ROOT$(dirname "$2")"
  cp "$1" "$VM_ROOT$2" || fail "cannot add $1 to the VM"
}

# vm_run SCRIPT [SECONDS]: boot the VM, run SCRIPT there (/bin/sh, as root,
# in /job), wait for it to power off (at most SECONDS, 300 by default).
# Sets VM_STATUS (the job's exit status), VM_SECONDS; the job's output is
# in $VM_OUT/log and what it left in /out under $VM_OUT.  Fails the test
# when the VM ends without a status (it crashed, or ran out of time).  A
# sanitizer build's options go along, so it reports in the VM as here.
vm_run() {
  local script=$1 limit=${2:-300} start rc=0 e v
  [ -n "$VM_KVER" ] || fail "vm_run before vm_require"
  cp "$script" "$VM_ROOT/job/job.sh"
  : > "$VM_ROOT/job/env"
  for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    [ -z "${!v:-}" ] || printf 'export %q\n' "$v=${!v}" >> "$VM_ROOT/job/env"
  done
  for e in $VM_ENV; do
    printf 'export %q\n' "$e" >> "$VM_ROOT/job/env"
  done
  rm -rf "$VM_OUT"
  mkdir -p "$VM_OUT"
  (cd "$VM_ROOT" && find . | /bin/busybox cpio -o -H newc -R 0:0 2> /dev/null) > "$VM_DIR/initrd.cpio" \
    || fail "cannot pack the VM's initramfs"
  : > "$VM_CONSOLE"
  [ "$_vm_cleanup_set" = 1 ] || {
    at_exit _vm_kill
    _vm_cleanup_set=1
  }
  start=$(date +%s%N)
  # oops=panic panic=-1: a kernel oops ends the VM at once (the test fails
  # then, with the oops in the console's log) instead of leaving a job
  # that waits for a dead kernel thread until the time limit.
  # hardened_usercopy=off: with target and host in one kernel, nvmet-tcp
  # receives over loopback the very pages nvme-tcp sent, and when those
  # belong to a large folio (a transparent huge page of fio's direct I/O
  # buffers) the hardened usercopy check takes a copy that spans pages for
  # an overflow (kernel BUG at mm/usercopy.c in nvmet_tcp_io_work, seen
  # with Debian's 6.1 and 1 MiB writes); between two machines the target
  # never sees the sender's pages.
  VM_CMDLINE="console=ttyS0 quiet rdinit=/init oops=panic panic=-1 hardened_usercopy=off"
  # -accel tcg: software emulation (no KVM); -no-reboot: a panic's reboot
  # ends QEMU instead; no network device at all; the serial console (the
  # kernel's messages) to a file; stdin from /dev/null, so QEMU never
  # reads the test's terminal.  timeout ends a VM that hangs; the test's
  # own exit ends it through _vm_kill.
  timeout -k 5 "$limit" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m "$VM_MEMORY" \
    -nodefaults -no-user-config -display none -no-reboot \
    -serial "file:$VM_CONSOLE" -monitor none -net none \
    -kernel "$VM_KERNEL" -initrd "$VM_DIR/initrd.cpio" \
    -append "$VM_CMDLINE" \
    -fsdev "local,id=out,path=$VM_OUT,security_model=none" \
    -device virtio-9p-pci,fsdev=out,mount_tag=out \
    < /dev/null > "$VM_DIR/qemu.log" 2>&1 &
  _vm_qemu_pid=$!
  # wait returns early on a signal, so the test's traps still run at once.
  wait "$_vm_qemu_pid" || rc=$?
  _vm_qemu_pid=""
  VM_SECONDS=$((($(date +%s%N) - start) / 10000000))
  VM_SECONDS="$((VM_SECONDS / 100)).$(printf %02d $((VM_SECONDS % 100)))"
  if [ ! -f "$VM_OUT/status" ]; then
    echo "--- qemu:" >&2
    cat "$VM_DIR/qemu.log" >&2
    echo "--- the VM's console (last 60 lines):" >&2
    tail -n 60 "$VM_CONSOLE" >&2
    [ -f "$VM_OUT/log" ] && { echo "--- the job's output:" >&2; cat "$VM_OUT/log" >&2; }
    [ "$rc" = 124 ] && fail "the VM did not finish in ${limit}s"
    fail "the VM ended without the job's exit status (qemu exited $rc)"
  fi
  VM_STATUS=$(cat "$VM_OUT/status")
}
_vm_cleanup_set=0

# _vm_kill: end a VM still running (the test is ending); keep what the
# last VM left where SPARKCTL_VM_KEEP names a directory (for a look at a
# failure: the console's log, the out directory, qemu's messages).
_vm_kill() {
  [ -z "$_vm_qemu_pid" ] || kill_child "$_vm_qemu_pid"
  if [ -n "${SPARKCTL_VM_KEEP:-}" ] && [ -d "$VM_OUT" ]; then
    mkdir -p "$SPARKCTL_VM_KEEP"
    cp -a "$VM_OUT" "$VM_CONSOLE" "$VM_DIR/qemu.log" "$SPARKCTL_VM_KEEP/"
  fi
}
