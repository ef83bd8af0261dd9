#!/usr/bin/env bash
# 'sparkctl launch' across a cluster of namespace nodes with real sshd: the
# rank environment on every node, arguments byte for byte, and the job ended
# everywhere - nothing left in any namespace - when a rank fails, when the
# launcher gets SIGINT or SIGKILL, when a node's sshd dies mid-job, when a
# node is cut off mid-job, and when a node cannot be reached.  Also --stall and --job-timeout.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
command -v env > /dev/null && env --default-signal=INT true 2> /dev/null \
  || skip "env --default-signal is needed (coreutils 8.31 or later)"
cluster_up 2
hosts=$(cluster_hosts)
export TMPDIR=$TMP
mkdir "$TMP/work" "$TMP/r"
cd "$TMP/work"

# job_left NODE: the processes of the node's namespace that are not its sshd
# (ranks, agents), one "pid command" per line; zombies do not count.
job_left() { cluster_procs "$1"; }
nothing_left() { [ -z "$(job_left node0)$(job_left node1)" ]; }
# no_survivors WHAT: nothing of the job in any namespace within 5 s.
no_survivors() {
  local i
  for ((i = 0; i < 250; i++)); do
    nothing_left && return 0
    sleep 0.02
  done
  job_left node0 >&2
  job_left node1 >&2
  fail "processes of the job survived $1"
}
# started N: wait until N ranks have written their start mark.
nr_started() { [ "$(find "$TMP/r" -name 'started.*' | wc -l)" -ge "$1" ]; }
started() { wait_until 20 "$1 ranks to start" nr_started "$1"; }

# --- The rank environment on every node ---
export SPARKCTL_TEST_PASSED="through -x"
expect 0 "$SPARKCTL" launch -H "$hosts" -N 2 --env "FOO=bar baz" -x SPARKCTL_TEST_PASSED -- \
  sh -c 'env > "$0/env.$RANK"; pwd > "$0/pwd.$RANK"; hostname > "$0/host.$RANK"' "$TMP/r"
contains "$TMP/err" "4 ranks ended with status 0"
"$PYTHON" - "$TMP/r" "$TMP/work" <<'PY' || fail "rank environment"
import sys
d, work = sys.argv[1], sys.argv[2]
envs = {}
for r in range(4):
    envs[r] = dict(l.split("=", 1) for l in open("%s/env.%d" % (d, r)).read().splitlines() if "=" in l)
    e = envs[r]
    node, local = divmod(r, 2)
    want = {"RANK": str(r), "LOCAL_RANK": str(local), "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2",
            "NODE_RANK": str(node), "GROUP_RANK": str(node),
            # node 0's fabric (bootstrap) address, not its ssh name or LAN address
            "MASTER_ADDR": "198.19.177.11",
            "FOO": "bar baz", "SPARKCTL_TEST_PASSED": "through -x",
            # the node's sparkctl env
            "NCCL_SOCKET_IFNAME": "=enp1s0f1np1", "GLOO_SOCKET_IFNAME": "enp1s0f1np1"}
    for k, v in want.items():
        if e.get(k) != v:
            sys.exit("rank %d: %s=%r, expected %r" % (r, k, e.get(k), v))
    assert "NCCL_IB_HCA" in e, "rank %d has no NCCL_IB_HCA" % r
    assert open("%s/pwd.%d" % (d, r)).read().strip() == work, "rank %d cwd" % r
    assert open("%s/host.%d" % (d, r)).read().strip() == "node%d" % node, "rank %d host" % r
ports = {envs[r]["MASTER_PORT"] for r in range(4)}
jobs = {envs[r]["SPARKCTL_JOB_ID"] for r in range(4)}
assert len(ports) == 1 and 0 < int(ports.pop()) < 65536, "MASTER_PORT differs or is bad"
assert len(jobs) == 1, "job ids differ"
PY
nothing_left || fail "processes are left after a clean job"
# The connections stay for the next launch (ControlPersist) in the private directory...
masters() { find "$SPARKCTL_SSH_CONTROL_DIR" -type s; }
[ -n "$(masters)" ] || fail "no ssh master kept for the next launch"
# ...with what 'ssh -G' said of each node's key exchange (curve25519 first: the
# cluster's ssh is OpenSSH 9.x, whose default puts sntrup761 first).
for node in node0 node1; do
  f="$SPARKCTL_SSH_CONTROL_DIR/kex-$(printf %s "$node" | od -An -tx1 | tr -d ' \n')"
  [ -f "$f" ] || fail "no key exchange kept for $node"
  if "$SPARKCTL_SSH" -G "$node" | grep -q '^kexalgorithms sntrup761'; then
    grep -q '^curve25519-sha256,' "$f" || fail "the kept key exchange of $node does not start with curve25519"
  fi
done
# ...unless --ssh-close: then nothing of ssh outlives the launch.
"$SPARKCTL_SSH" -O exit -o ControlPath="$SPARKCTL_SSH_CONTROL_DIR/%C" node0 2> /dev/null || true
"$SPARKCTL_SSH" -O exit -o ControlPath="$SPARKCTL_SSH_CONTROL_DIR/%C" node1 2> /dev/null || true
# A master removes its socket just after -O exit returns: look again each time.
no_master_left() { [ -z "$(masters)" ]; }
wait_until 5 "the masters to exit" no_master_left
expect 0 "$SPARKCTL" launch -H "$hosts" --ssh-close -- true
[ -z "$(masters)" ] || fail "--ssh-close left a master in the shared directory"
! ls -d "$TMP"/sparkctl-ssh-* 2> /dev/null || fail "an ssh control directory was left behind"
no_ssh_left() { ! pgrep -f "^ssh -F $TMP/ssh_config" > /dev/null; }
wait_until 5 "no ssh client left" no_ssh_left

# --- Arguments with every awkward byte arrive intact on the remote node ---
args=("two words" "it's" 'say "hi"' '$HOME' '`id`' 'a;b' $'line1\nline2' $'tab\there' 'back\slash'
  'ünïcödé ✓' $'\xff\xfe' '' '-n' '%41' '*' '~')
printf '%s\0' "${args[@]}" > "$TMP/args.want"
expect 0 "$SPARKCTL" launch -H "$hosts" -- sh -c 'out=$1; shift; printf "%s\0" "$@" > "$out.$RANK"' \
  sh "$TMP/r/args" "${args[@]}"
cmp "$TMP/args.want" "$TMP/r/args.0" || fail "arguments changed on node0"
cmp "$TMP/args.want" "$TMP/r/args.1" || fail "arguments changed on node1 (over ssh)"

# --- Rank 2 exits 3: every other rank ends, the launcher exits 3 ---
rm -f "$TMP/r"/*
expect 3 "$SPARKCTL" launch -H "$hosts" -N 2 -- sh -c \
  'touch "$0/started.$RANK"; if [ "$RANK" = 2 ]; then sleep 0.5; exit 3; fi; exec sleep 300' "$TMP/r"
contains "$TMP/err" "rank 2 on node1 ended with exit 3"
grep -E '^ +2 +node1 +exit 3 .*first to fail' "$TMP/err" > /dev/null || fail "summary of rank 2"
# The others got SIGTERM and were ended by it (not SIGKILL after the grace).
[ "$(grep -c 'signal 15 (SIGTERM).*ended by sparkctl' "$TMP/err")" = 3 ] || {
  cat "$TMP/err" >&2
  fail "the other ranks were not ended by SIGTERM"
}
nothing_left || fail "processes of the job are left after rank 2 failed"

# A rank that ignores SIGTERM is killed after the grace; its children too.
rm -f "$TMP/r"/*
expect 1 "$SPARKCTL" launch -H "$hosts" --grace 1 -- sh -c \
  'touch "$0/started.$RANK"; if [ "$RANK" = 0 ]; then sleep 0.5; exit 1; fi
   trap "" TERM; setsid sleep 300 & sleep 300' "$TMP/r"
contains "$TMP/err" "signal 9 (SIGKILL)"
nothing_left || fail "a rank that ignores SIGTERM, or its setsid child, survived"

# --- SIGINT to the launcher ---
rm -f "$TMP/r"/*
env --default-signal=INT "$SPARKCTL" launch -H "$hosts" -N 2 -- sh -c \
  'touch "$0/started.$RANK"; exec sleep 300' "$TMP/r" > "$TMP/out" 2> "$TMP/err" &
launcher=$!
started 4
kill -INT "$launcher"
set +e; wait "$launcher"; status=$?; set -e
[ "$status" = 130 ] || { cat "$TMP/err" >&2; fail "launcher exited $status after SIGINT, expected 130"; }
contains "$TMP/err" "the job was ended by SIGINT"
no_survivors "SIGINT to the launcher"

# --- SIGKILL to the launcher: every agent sees its input close ---
rm -f "$TMP/r"/*
"$SPARKCTL" launch -H "$hosts" -N 2 -- sh -c 'touch "$0/started.$RANK"; exec sleep 300' "$TMP/r" \
  > "$TMP/out" 2> "$TMP/err" &
launcher=$!
started 4
kill -KILL "$launcher"
wait "$launcher" 2> /dev/null || true
no_survivors "SIGKILL to the launcher"

# --- node1's sshd dies mid-job (its sessions too): node1 ends its ranks, the launcher the rest ---
rm -f "$TMP/r"/*
"$SPARKCTL" launch -H "$hosts" -N 2 -- sh -c 'touch "$0/started.$RANK"; exec sleep 300' "$TMP/r" \
  > "$TMP/out" 2> "$TMP/err" &
launcher=$!
started 4
for pid in $(ip netns pids "$(cluster_ns node1)"); do
  [ "$(cat "/proc/$pid/comm" 2> /dev/null)" != sshd ] || kill -KILL "$pid" 2> /dev/null || true
done
set +e; wait "$launcher"; status=$?; set -e
[ "$status" = 3 ] || { cat "$TMP/err" >&2; fail "launcher exited $status after node1's sshd died"; }
contains "$TMP/err" "lost node1"
no_survivors "the death of node1's sshd"
cluster_node_down node1 # forget the killed sshd
cluster_node_up node1

# --- node1 cut off mid-job (its link down, its sshd and the job's ssh session
# left as they are): the launcher gives it up after ssh's 15 s, and node1's
# agent, whose pings from the launcher stopped, ends its ranks by itself
# while still cut off - no session end ever reaches it ---
rm -f "$TMP/r"/*
"$SPARKCTL" launch -H "$hosts" -N 2 -- sh -c 'touch "$0/started.$RANK"; exec sleep 300' "$TMP/r" \
  > "$TMP/out" 2> "$TMP/err" &
launcher=$!
started 4
cluster_node_unreachable node1
at_exit "cluster_node_reachable node1"
set +e; wait "$launcher"; status=$?; set -e
[ "$status" = 3 ] || { cat "$TMP/err" >&2; fail "launcher exited $status after node1 was cut off"; }
contains "$TMP/err" "lost node1"
[ -z "$(job_left node0)" ] || { job_left node0 >&2; fail "node0's part outlived the launch"; }
node1_ended() { ! job_left node1 | grep -q 'sleep 300\|agent launch'; }
# 30 s of silence (6 pings) and the agent's short grace, from the cut.
for ((i = 0; i < 120; i++)); do node1_ended && break; sleep 0.5; done
node1_ended || { job_left node1 >&2; fail "node1's ranks outlived the launch while it was cut off"; }
cluster_node_reachable node1

# --- An unreachable node: a clear error within the connect timeout; nothing ran anywhere ---
rm -f "$TMP/r"/*
cluster_node_unreachable node1
expect 3 timeout 60 "$SPARKCTL" launch -H "$hosts" --connect-timeout 2 -- \
  sh -c 'touch "$0/started.$RANK"; sleep 300' "$TMP/r"
contains "$TMP/err" "node1"
grep -E 'timed out|No route|unreachable' "$TMP/err" > /dev/null || {
  cat "$TMP/err" >&2
  fail "the error does not say why node1 could not be reached"
}
[ -z "$(ls "$TMP/r")" ] || fail "a rank started although node1 was unreachable"
nothing_left || fail "processes are left after an unreachable node"
cluster_node_reachable node1

# A node without sparkctl: said plainly.
cluster_remote_sparkctl node1 -
expect 3 "$SPARKCTL" launch -H "$hosts" --remote-sparkctl sparkctl -- true
contains "$TMP/err" "node1"
# One whose sparkctl fails with terminal controls (and ssh's CR LF) on
# stderr: relayed escaped, the CR dropped.
printf '#!/bin/sh\nprintf "no\\033]0;T\\007pe\\r\\n" >&2\nexit 1\n' > "$TMP/failing"
chmod +x "$TMP/failing"
cluster_remote_sparkctl node1 "$TMP/failing"
expect 3 "$SPARKCTL" launch -H "$hosts" --remote-sparkctl sparkctl -- true
no_controls "$TMP/out" "$TMP/err"
contains "$TMP/err" 'sparkctl launch: cannot start on node1: no\x1b]0;T\x07pe'
lacks "$TMP/err" '\x0d'
cluster_remote_sparkctl node1 "$SPARKCTL"

# --- The stall watchdog advises; --job-timeout ends the job with 5 ---
expect 5 "$SPARKCTL" launch -H "$hosts" --stall 1 --job-timeout 3 -- sleep 300
contains "$TMP/err" "no output for 1 s"
contains "$TMP/err" "sparkctl doctor -H $hosts"
contains "$TMP/err" "--job-timeout 3 s reached"
nothing_left || fail "processes are left after --job-timeout"

# --- The output of every rank, prefixed, stdout and stderr apart ---
expect 0 "$SPARKCTL" launch -H "$hosts" --tag-output -N 2 -- \
  sh -c 'i=0; while [ $i -lt 200 ]; do echo "out $RANK $i"; echo "err $RANK $i" >&2; i=$((i+1)); done'
for r in 0 1 2 3; do
  node=node$((r / 2))
  [ "$(grep -c "^\[$node:$r\] out $r " "$TMP/out")" = 200 ] || fail "stdout lines of rank $r"
  [ "$(grep -c "^\[$node:$r\] err $r " "$TMP/err")" = 200 ] || fail "stderr lines of rank $r"
done
lacks "$TMP/out" "err "

# --- A kept master whose connection died unseen (node1's sshd restarted while
# its link was down): ssh makes a new connection by itself, and the launch
# says nothing of the dead master ---
expect 0 "$SPARKCTL" launch -H "$hosts" -- true
[ -n "$(masters)" ] || fail "no ssh master kept for the next launch"
cluster_node_unreachable node1
for pid in $(ip netns pids "$(cluster_ns node1)"); do
  [ "$(cat "/proc/$pid/comm" 2> /dev/null)" != sshd ] || kill -KILL "$pid" 2> /dev/null || true
done
cluster_node_down node1
cluster_node_up node1
cluster_node_reachable node1
expect 0 "$SPARKCTL" launch -H "$hosts" -- true
lacks "$TMP/err" "mux_client"
lacks "$TMP/err" "master"
contains "$TMP/err" "2 ranks ended with status 0"
