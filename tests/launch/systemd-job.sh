# shellcheck shell=sh
# The job of t0845-launch-systemd.sh, run by systemd in the VM
# (tests/storage/vm.sh, vm_use_systemd) as root: each rank in a scope of
# the system manager.  Exit 0 when all holds; each failure is one "FAIL:"
# line.  The checks are lib-systemd-job.sh's.
# shellcheck source=tests/launch/lib-systemd-job.sh
. /job/lib-systemd-job.sh
SYSTEMCTL=systemctl
SCOPE_PREFIX='0::/system.slice/sparkctl-*-n0'
[ "$(cat /proc/1/comm)" = systemd ] || fail "systemd is not the VM's init"
check_agent_killed auto
check_job_ends auto
check_rank_scope systemd
