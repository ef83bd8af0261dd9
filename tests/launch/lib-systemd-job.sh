# shellcheck shell=sh
# What the jobs of t0845-launch-systemd.sh (systemd-job.sh, as root) and
# t0846-launch-systemd-user.sh (systemd-user-job.sh, as a user, through the
# user's manager) check in the VM (tests/storage/vm.sh, vm_use_systemd),
# with busybox's tools: 'sparkctl launch' there must put each rank in a
# systemd scope of its own, and what a rank leaves behind - after it
# cleared its environment, or ignoring SIGTERM - must end with the job,
# also when the agent was killed.  Sourced; each check prints one line, and
# a failure one "FAIL:" line and exits 1.
#
# Set before the checks:
#   SYSTEMCTL    how the job's manager is asked ("systemctl", or
#                "systemctl --user")
#   SCOPE_PREFIX the cgroup of a scope of the job's node 0 up to the
#                rank's number (a shell pattern for /proc/PID/cgroup's
#                "0::" line)
set -u
fail() {
  echo "FAIL: $*"
  [ -f /tmp/err ] && sed 's/^/  launch: /' /tmp/err
  command -v at_fail > /dev/null && at_fail
  exit 1
}
# sleeping N: how many processes run exactly "sleep N" (the marks).
sleeping() {
  n=0
  for f in /proc/[0-9]*/cmdline; do
    [ "$(tr '\0' ' ' < "$f" 2> /dev/null)" = "sleep $1 " ] && n=$((n + 1))
  done
  echo "$n"
}
# wait_until SECONDS WHAT COMMAND...: poll COMMAND every 0.1 s.
wait_until() {
  t=$(($1 * 10)) what=$2
  shift 2
  while ! "$@"; do
    t=$((t - 1))
    [ "$t" -gt 0 ] || fail "timed out waiting for $what"
    sleep 0.1
  done
}
at_least() { [ "$(sleeping "$1")" -ge "$2" ]; }
none() { [ "$(sleeping "$1")" = 0 ]; }
files() { [ "$(ls "$1" | wc -l)" -ge "$2" ]; }
# ranks_up N: N ranks are up (their files in /tmp/r); a launch that ended
# before that fails the check at once.
ranks_up() {
  files /tmp/r "$1" && return 0
  kill -0 "$launcher" 2> /dev/null || fail "launch ended before its ranks started"
  return 1
}
no_units() { [ -z "$($SYSTEMCTL list-units --all --no-legend --type=scope 'sparkctl-*' 2> /dev/null)" ]; }

# Two daemons per rank, outside its session: one after env -i, one after a
# sudo-style reset that ignores SIGTERM; then the rank itself sleeps.
DAEMONS='( setsid env -i sleep "$0" & )
( env -i PATH=/usr/bin:/bin setsid sh -c "trap \"\" TERM HUP; exec sleep $0" & )
touch "$1/up.$RANK"; exec sleep "$0"'

# check_agent_killed CONTAIN: two ranks with their daemons, each rank's
# processes in a scope of its own; SIGKILL to the agent; launch exits 3,
# every daemon ends, summary.json says systemd, no scope is left.
check_agent_killed() {
  contain=$1
  rm -rf /tmp/r /tmp/logs /tmp/cgroups
  mkdir -p /tmp/r /tmp/logs
  sparkctl launch --no-env --contain "$contain" -N 2 --grace 1 --log-dir /tmp/logs -- \
    sh -c "$DAEMONS" 4321 /tmp/r > /tmp/out 2> /tmp/err &
  launcher=$!
  wait_until 60 "the ranks to start" ranks_up 2
  wait_until 60 "the daemons to start" at_least 4321 6
  for f in /proc/[0-9]*/cmdline; do
    [ "$(tr '\0' ' ' < "$f" 2> /dev/null)" = "sleep 4321 " ] || continue
    cg=$(cat "${f%/cmdline}/cgroup")
    # shellcheck disable=SC2254 # the pattern is the caller's
    case $cg in
    $SCOPE_PREFIX-*.scope) echo "$cg" >> /tmp/cgroups ;;
    *) fail "a process of the job is in $cg, not in a scope of the job" ;;
    esac
  done
  [ "$(wc -l < /tmp/cgroups)" = 6 ] || fail "$(wc -l < /tmp/cgroups) processes of the job in its scopes, expected 6"
  # One scope per rank, three processes in each.
  [ "$(sort -u /tmp/cgroups | wc -l)" = 2 ] ||
    fail "the job's processes are in $(sort -u /tmp/cgroups | tr '\n' ' '), expected a scope per rank"
  echo "6 processes of the job in its 2 scopes:"
  sort -u /tmp/cgroups | sed 's/^/  /'
  # The agent: the launcher's child running "sparkctl agent launch" (busybox
  # has no pgrep).
  agent=""
  for f in /proc/[0-9]*/stat; do
    # shellcheck disable=SC2046 # stat's fields
    set -- $(cat "$f" 2> /dev/null)
    [ "${4:-}" = "$launcher" ] || continue
    case $(tr '\0' ' ' < "${f%/stat}/cmdline") in
    *"agent launch"*) agent=$1 ;;
    esac
  done
  [ -n "$agent" ] || fail "no agent under the launcher"
  kill -KILL "$agent"
  wait "$launcher"
  status=$?
  [ "$status" = 3 ] || fail "launch exited $status after its agent was killed, expected 3"
  wait_until 30 "the daemons of a job whose agent was killed to end" none 4321
  grep -q '"containment": *"systemd"' /tmp/logs/summary.json ||
    fail "summary.json does not say the node used systemd: $(cat /tmp/logs/summary.json)"
  wait_until 30 "the job's scopes to go" no_units
  echo "agent killed (--contain $contain): exit 3, every daemon ended, no scope left"
}

# check_job_ends CONTAIN: a job that exits 0 leaves a daemon; it ends, and
# so do the scopes.
check_job_ends() {
  sparkctl launch --no-env --contain "$1" -N 2 -- sh -c '(setsid env -i sleep "$0" &); exit 0' 4322 \
    > /tmp/out 2> /tmp/err
  status=$?
  [ "$status" = 0 ] || fail "a job that exited 0 ended with $status"
  wait_until 30 "what a finished job left to end" none 4322
  wait_until 30 "the job's scopes to go" no_units
  echo "job ended by itself (--contain $1): exit 0, its daemon ended, no scope left"
}

# check_rank_scope CONTAIN: the rank runs in sparkctl-JOB-n0-0.scope.
check_rank_scope() {
  sparkctl launch --no-env --contain "$1" -- cat /proc/self/cgroup > /tmp/out 2> /tmp/err ||
    fail "--contain $1 failed under systemd"
  # shellcheck disable=SC2254 # the pattern is the caller's
  case $(sed -n 's/^\[0\] //p' /tmp/out) in
  $SCOPE_PREFIX-0.scope) ;;
  *) fail "--contain $1: the rank ran in $(cat /tmp/out)" ;;
  esac
  echo "--contain $1: the rank ran in its scope"
}
