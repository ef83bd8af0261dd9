#!/usr/bin/env bash
# 'sparkctl launch' as a user other than root on a node whose init is
# systemd: each rank runs in a transient scope of the user's manager
# (systemd-run --user --scope, below user@UID.service, which logind starts
# and where systemd delegates the user's cgroups), so what it starts -
# after env -i, or ignoring SIGTERM - ends with the job, also after the
# node's agent was SIGKILLed, and no scope outlives the job.  In the storage
# tests' VM (tests/storage/vm.sh) booted with this host's systemd, D-Bus
# and logind, and a lingering user; the job is
# tests/launch/systemd-user-job.sh.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/storage/vm.sh"
command -v systemd-run > /dev/null && [ -x /lib/systemd/systemd ] ||
  _vm_missing "no systemd (Debian package systemd)"
[ -x /lib/systemd/systemd-logind ] || _vm_missing "no systemd-logind (Debian package systemd)"
command -v dbus-daemon > /dev/null && [ -f /usr/share/dbus-1/system.conf ] ||
  _vm_missing "no D-Bus system bus (Debian package dbus)"
[ -f /usr/lib/systemd/user/dbus.socket ] || _vm_missing "no user bus for systemd --user (Debian package dbus-user-session)"
pam_dir=$(ldd /lib/systemd/systemd | awk '$1 ~ /^libpam\.so/ { print $3 }')
[ -f "${pam_dir%/*}/security/pam_systemd.so" ] || _vm_missing "no pam_systemd (Debian package libpam-systemd)"
command -v setpriv > /dev/null || _vm_missing "no setpriv (Debian package util-linux)"
vm_require
vm_build
vm_use_systemd
vm_use_systemd_logind spark 1000
vm_add "$SRCDIR/tests/launch/lib-systemd-job.sh" /job/lib-systemd-job.sh
vm_run "$SRCDIR/tests/launch/systemd-user-job.sh" 240
[ "$VM_STATUS" = 0 ] || vm_job_failed "launch through the user's manager"
sed 's/^/# /' "$VM_OUT/log"
note "the VM ran $VM_SECONDS s"
