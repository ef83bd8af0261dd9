#!/usr/bin/env bash
# 'sparkctl launch' keeps each node's part of a job in a cgroup of its own,
# so that what a rank starts is ended with the job even after it cleared
# its environment (env -i, a sudo-style reset) and the node's agent was
# killed: on this host and across namespace nodes with real sshd.  Where no
# cgroup can be had (a user who may not write one), the environment marks
# are the fallback, and the user is told.
. "$SRCDIR/tests/lib.sh"
require_root
env --default-signal=INT true 2> /dev/null \
  || skip "env --default-signal is needed (coreutils 8.31 or later)"
unset SPARKCTL_ROOT
mkdir "$TMP/r" "$TMP/logs"
chmod 755 "$TMP"
cd "$TMP"

MARK_BASE=8
. "$SRCDIR/tests/launch/lib-procs.sh"

# A cgroup of the job's own needs a writable cgroup v2 hierarchy.
if ! "$SPARKCTL" launch --no-env --contain cgroup -- true > /dev/null 2> "$TMP/probe.err"; then
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] \
    && { cat "$TMP/probe.err" >&2; fail "root cannot make a cgroup here, and this run requires it"; }
  skip "no writable cgroup v2 hierarchy: $(head -1 "$TMP/probe.err")"
fi
CGROUP2=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)

# job_cgroups JOB: the cgroups named after the job, anywhere.
job_cgroups() { find "$CGROUP2" -maxdepth 12 -type d -name "sparkctl-$1-*" 2> /dev/null || true; }
# A rank that leaves two daemons outside its session and environment: one
# after env -i, one after a sudo-style reset that also ignores SIGTERM.
DAEMONS='( setsid env -i sleep "$0" & )
( env -i PATH=/usr/bin:/bin setsid sh -c "trap \"\" TERM HUP; exec sleep $0" & )
touch "$1/up.$RANK"; exec sleep "$0"'
up() { [ "$(find "$TMP/r" -name 'up.*' | wc -l)" -ge "$1" ]; }
summary() { json_get "$1/summary.json" "$2"; }

# ---- this host: SIGKILL to the agent --------------------------------------
new_mark
rm -rf "$TMP/r"/* "$TMP/logs"/*
env --default-signal=INT "$SPARKCTL" launch --no-env -N 2 --grace 1 --log-dir "$TMP/logs" -- \
  bash -c "$DAEMONS" "$M" "$TMP/r" > "$TMP/out" 2> "$TMP/err" &
launcher=$!
wait_for 30 "the ranks to start" up 2
wait_for 30 "the daemons to start" sleeping "$M" 6
agent=$(pgrep -P "$launcher" -f "agent launch")
[ -n "$agent" ] || fail "no agent under the launcher"
kill -KILL "$agent"
set +e; wait "$launcher"; status=$?; set -e
[ "$status" = 3 ] || { show; fail "exit $status after the agent was killed, expected 3"; }
contains "$TMP/err" "lost localhost"
wait_for 20 "the daemons of a job whose agent was killed to end" gone "$M"
[ "$(summary "$TMP/logs" 'd["nodes"][0]["containment"]')" = cgroup ] \
  || fail "summary.json does not say the node used a cgroup"
job=$(summary "$TMP/logs" 'd["job_id"]')
[ -z "$(job_cgroups "$job")" ] || fail "the job's cgroup is left: $(job_cgroups "$job")"

# ---- this host: a job that ends by itself leaves no cgroup either ----------
new_mark
rm -rf "$TMP/logs"/*
run timeout -s KILL 60 "$SPARKCTL" launch --no-env -N 2 --log-dir "$TMP/logs" -- \
  sh -c '(setsid env -i sleep "$0" &); exit 0' "$M"
want 0
none_left "$M" "by a job that exited 0"
job=$(summary "$TMP/logs" 'd["job_id"]')
[ -z "$(job_cgroups "$job")" ] || fail "the job's cgroup is left after its end"

# ---- --contain ----------------------------------------------------------------
run "$SPARKCTL" launch --contain sometimes -- true
want 2
contains "$TMP/err" "--contain 'sometimes'"
if [ ! -d /run/systemd/system ]; then
  run timeout -s KILL 60 "$SPARKCTL" launch --no-env --contain systemd -- touch "$TMP/ran"
  want 3
  contains "$TMP/err" "systemd is not the init system"
  [ ! -e "$TMP/ran" ] || fail "--contain systemd without systemd ran the command"
fi

# ---- the marks: what a user without a cgroup gets -----------------------------
# Asked for by name: a daemon that keeps its environment is still ended
# after the agent was killed (one that clears it is what cgroups are for).
new_mark
rm -rf "$TMP/r"/* "$TMP/logs"/*
env --default-signal=INT "$SPARKCTL" launch --no-env --contain marks --log-dir "$TMP/logs" -- \
  sh -c 'setsid sleep "$0" > /dev/null 2>&1 < /dev/null & touch "$1/up.$RANK"; exec sleep "$0"' \
  "$M" "$TMP/r" > "$TMP/out" 2> "$TMP/err" &
launcher=$!
wait_for 30 "the rank to start" up 1
wait_for 30 "the daemon to start" sleeping "$M" 2
kill -KILL "$(pgrep -P "$launcher" -f "agent launch")"
set +e; wait "$launcher"; set -e
wait_for 20 "the marked daemon to end" gone "$M"
[ "$(summary "$TMP/logs" 'd["nodes"][0]["containment"]')" = marks ] \
  || fail "summary.json does not say the node used the marks"
lacks "$TMP/err" "no cgroup for the job"
# Chosen by auto for a user who may not make a cgroup: said, with the reason.
if command -v setpriv > /dev/null; then
  run setpriv --reuid=65534 --regid=65534 --clear-groups \
    timeout -s KILL 60 "$SPARKCTL" launch --no-env --chdir / -- true
  want 0
  contains "$TMP/err" "localhost: no cgroup for the job ("
  contains "$TMP/err" "its processes are found by their environment"
fi

# ---- across nodes: SIGKILL to one node's agent, over real sshd ----------------
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
cluster_up 2
hosts=$(cluster_hosts)
new_mark
rm -rf "$TMP/r"/* "$TMP/logs"/*
"$SPARKCTL" launch -H "$hosts" --no-env --grace 1 --log-dir "$TMP/logs" -- \
  bash -c "$DAEMONS" "$M" "$TMP/r" > "$TMP/out" 2> "$TMP/err" &
launcher=$!
wait_for 30 "the ranks to start" up 2
wait_for 30 "the daemons to start" sleeping "$M" 6
agent=""
for pid in $(ip netns pids "$(cluster_ns node1)"); do
  grep -qa "agent" "/proc/$pid/cmdline" 2> /dev/null && grep -qa "launch" "/proc/$pid/cmdline" \
    && [ "$(cat "/proc/$pid/comm" 2> /dev/null)" = sparkctl ] && agent=$pid
done
[ -n "$agent" ] || fail "no agent on node1"
kill -KILL "$agent"
set +e; wait "$launcher"; status=$?; set -e
[ "$status" = 3 ] || { show; fail "exit $status after node1's agent was killed, expected 3"; }
wait_for 20 "the daemons on both nodes to end" gone "$M"
for n in 0 1; do
  [ "$(summary "$TMP/logs" "d['nodes'][$n]['containment']")" = cgroup ] \
    || fail "node$n did not use a cgroup"
done
job=$(summary "$TMP/logs" 'd["job_id"]')
[ -z "$(job_cgroups "$job")" ] || fail "the job's cgroups are left: $(job_cgroups "$job")"
