# shellcheck shell=sh
# The job of t0845-launch-systemd.sh, run by systemd in the VM
# (tests/storage/vm.sh, vm_use_systemd) with busybox's tools: 'sparkctl
# launch' there must put each rank in a systemd scope of its own, and what
# a rank leaves behind - after it cleared its environment, or ignoring
# SIGTERM - must end with the job, also when the agent was killed.  Exit 0
# when all holds; each failure is one "FAIL:" line.
set -u
fail() {
  echo "FAIL: $*"
  [ -f /tmp/err ] && sed 's/^/  launch: /' /tmp/err
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
no_units() { [ -z "$(systemctl list-units --all --no-legend --type=scope 'sparkctl-*' 2> /dev/null)" ]; }

[ "$(cat /proc/1/comm)" = systemd ] || fail "systemd is not the VM's init"
# Two daemons per rank, outside its session: one after env -i, one after a
# sudo-style reset that ignores SIGTERM; then the rank itself sleeps.
DAEMONS='( setsid env -i sleep "$0" & )
( env -i PATH=/usr/bin:/bin setsid sh -c "trap \"\" TERM HUP; exec sleep $0" & )
touch "$1/up.$RANK"; exec sleep "$0"'

# ---- SIGKILL to the agent ---------------------------------------------------
mkdir -p /tmp/r /tmp/logs
sparkctl launch --no-env -N 2 --grace 1 --log-dir /tmp/logs -- \
  sh -c "$DAEMONS" 4321 /tmp/r > /tmp/out 2> /tmp/err &
launcher=$!
wait_until 60 "the ranks to start" files /tmp/r 2
wait_until 60 "the daemons to start" at_least 4321 6
scopes=0
for f in /proc/[0-9]*/cmdline; do
  [ "$(tr '\0' ' ' < "$f" 2> /dev/null)" = "sleep 4321 " ] || continue
  cg=$(cat "${f%/cmdline}/cgroup")
  case $cg in
  0::/system.slice/sparkctl-*-n0-*.scope) scopes=$((scopes + 1)) ;;
  *) fail "a process of the job is in $cg, not in a scope of the job" ;;
  esac
done
[ "$scopes" = 6 ] || fail "$scopes processes of the job in its scopes, expected 6"
echo "6 processes of the job in its scopes:"
systemctl list-units --no-legend --plain --type=scope 'sparkctl-*' | awk '{ print "  " $1 }'
# The agent: the launcher's child running "sparkctl agent launch" (busybox
# has no pgrep).
agent=""
for f in /proc/[0-9]*/stat; do
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
echo "agent killed: exit 3, every daemon ended, no scope left"

# ---- a job that ends by itself ----------------------------------------------
sparkctl launch --no-env -N 2 -- sh -c '(setsid env -i sleep "$0" &); exit 0' 4322 \
  > /tmp/out 2> /tmp/err
status=$?
[ "$status" = 0 ] || fail "a job that exited 0 ended with $status"
wait_until 30 "what a finished job left to end" none 4322
wait_until 30 "the job's scopes to go" no_units
echo "job ended by itself: exit 0, its daemon ended, no scope left"

# ---- asked for by name ------------------------------------------------------
sparkctl launch --no-env --contain systemd -- cat /proc/self/cgroup > /tmp/out 2> /tmp/err ||
  fail "--contain systemd failed under systemd"
grep -q '^\[0\] 0::/system.slice/sparkctl-.*-n0-0\.scope$' /tmp/out ||
  fail "--contain systemd: the rank ran in $(cat /tmp/out)"
echo "--contain systemd: the rank ran in its scope"
