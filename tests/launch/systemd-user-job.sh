# shellcheck shell=sh
# The job of t0846-launch-systemd-user.sh, run by systemd in the VM
# (tests/storage/vm.sh, vm_use_systemd_logind): as root it waits for the
# user's manager that logind starts for a lingering user, then runs the
# checks of lib-systemd-job.sh as that user, with the environment a login
# session (pam_systemd) gives: each rank in a scope of the user's manager,
# below user@UID.service; then without that environment (su, sudo, cron),
# where the launch must say why it cannot have a scope.  Exit 0 when all
# holds; each failure is one "FAIL:" line.
# shellcheck source=tests/launch/lib-systemd-job.sh
. /job/lib-systemd-job.sh
user=spark uid=1000
if [ "$(id -u)" = 0 ]; then
  [ "$(cat /proc/1/comm)" = systemd ] || fail "systemd is not the VM's init"
  # What a failure shows: the units and what they wrote.
  at_fail() {
    systemctl status --no-pager dbus.service systemd-logind.service "user@$uid.service" 2>&1
    dmesg | tail -n 40
  }
  # Active, or a failure at once: a unit it needs failed.
  user_manager() {
    for u in dbus.socket dbus.service systemd-logind.service "user@$uid.service"; do
      [ "$(systemctl is-failed "$u")" != failed ] || fail "$u failed"
    done
    [ "$(systemctl is-active "user@$uid.service")" = active ]
  }
  user_bus() { [ -S "/run/user/$uid/bus" ]; }
  wait_until 60 "logind to start the user's manager (user@$uid.service)" user_manager
  wait_until 30 "the user's bus" user_bus
  # util-linux setpriv, not busybox's applet (which busybox sh would prefer).
  exec /usr/bin/setpriv --reuid="$uid" --regid="$uid" --clear-groups \
    env HOME="/home/$user" USER="$user" LOGNAME="$user" XDG_RUNTIME_DIR="/run/user/$uid" \
    DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" sh "$0"
fi
[ "$(id -u)" = "$uid" ] || fail "the checks run as uid $(id -u), not $uid"
SYSTEMCTL="systemctl --user"
SCOPE_PREFIX="0::/user.slice/user-$uid.slice/user@$uid.service/*/sparkctl-*-n0"
check_agent_killed systemd
check_job_ends auto
check_rank_scope auto

# Without a login's environment (su, sudo, cron): systemd-run --user does
# not find the user's manager, and the launch says why.
(
  unset XDG_RUNTIME_DIR DBUS_SESSION_BUS_ADDRESS
  sparkctl launch --no-env --contain systemd -- true > /tmp/out 2> /tmp/err
  echo $? > /tmp/status
  sparkctl launch --no-env --log-dir /tmp/logs-auto -- true > /tmp/out-auto 2> /tmp/err-auto
  echo $? > /tmp/status-auto
)
[ "$(cat /tmp/status)" = 3 ] || fail "--contain systemd without XDG_RUNTIME_DIR exited $(cat /tmp/status), expected 3"
grep -q 'XDG_RUNTIME_DIR is not set' /tmp/err || fail "--contain systemd without XDG_RUNTIME_DIR does not say why"
echo "--contain systemd without XDG_RUNTIME_DIR: exit 3, $(head -n 1 /tmp/err)"
[ "$(cat /tmp/status-auto)" = 0 ] || fail "--contain auto without XDG_RUNTIME_DIR exited $(cat /tmp/status-auto): $(cat /tmp/err-auto)"
grep -q 'XDG_RUNTIME_DIR is not set' /tmp/logs-auto/summary.json ||
  fail "summary.json does not say why the node did not use systemd: $(cat /tmp/logs-auto/summary.json)"
echo "--contain auto without XDG_RUNTIME_DIR: $(head -n 1 /tmp/err-auto)"
