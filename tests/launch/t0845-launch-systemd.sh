#!/usr/bin/env bash
# 'sparkctl launch' on a node whose init is systemd: each rank runs in a
# transient scope of its own (systemd-run --scope), so what it starts -
# after env -i, or ignoring SIGTERM - ends with the job, also after the
# node's agent was SIGKILLed, and no scope outlives the job.  The host the
# tests run on has no systemd as init, so this runs in the storage tests'
# VM (tests/storage/vm.sh: Debian's kernel under QEMU) booted with this
# host's systemd as its init; the job is tests/launch/systemd-job.sh.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/storage/vm.sh"
command -v systemd-run > /dev/null && [ -x /lib/systemd/systemd ] ||
  _vm_missing "no systemd (Debian package systemd)"
vm_require
vm_build
vm_use_systemd
vm_add "$SRCDIR/tests/launch/lib-systemd-job.sh" /job/lib-systemd-job.sh
vm_run "$SRCDIR/tests/launch/systemd-job.sh" 240
[ "$VM_STATUS" = 0 ] || vm_job_failed "launch under systemd"
sed 's/^/# /' "$VM_OUT/log"
note "the VM ran $VM_SECONDS s"
