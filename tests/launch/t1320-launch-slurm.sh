#!/usr/bin/env bash
# 'sparkctl launch' under Slurm: a real slurmctld and one slurmd per
# namespace node of tests/cluster/cluster.sh, munge, a GPU Gres per node
# (File=/dev/null); jobs from salloc and sbatch
# run 'sparkctl launch', which starts the ranks as the tasks of one srun
# step: the rank variables, each node's own 'sparkctl env', output and
# summary; DDP with Gloo to completion; a failed rank, scancel, SIGINT and
# SIGKILL of the launcher leave nothing; --no-slurm uses ssh; an allocation
# smaller than asked, an unreachable slurmctld and a SLURM_JOB_NODELIST that
# is not a hostlist are one line each.
. "$SRCDIR/tests/lib.sh"
FAKE_LIBDIR=${1:?usage: t1320 FAKE_LIBDIR BROKEN_LIBDIR (meson test passes them)}

# ---- without Slurm: the command line
expect 2 "$SPARKCTL" launch --slurm --no-slurm -- true
contains "$TMP/err" "--slurm and --no-slurm contradict each other"
env -u SLURM_JOB_ID "$SPARKCTL" launch --slurm -- true > "$TMP/out" 2> "$TMP/err" && fail "--slurm outside an allocation ran"
contains "$TMP/err" "not inside a Slurm allocation"
# --slurm with no srun to run: exit 3, one line.
PATH=/nonexistent SLURM_JOB_ID=7 SLURM_JOB_NODELIST=node0 expect 3 "$SPARKCTL" launch --slurm -- true
contains "$TMP/err" "no srun in PATH"
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "more than one line of error without srun"
# An allocation whose SLURM_JOB_NODELIST is not a hostlist (Slurm never
# writes one so): exit 2 and one line that names it, with -H too (whose
# nodes are looked for in it; a stand-in srun, never run).
mkdir -p "$TMP/srun-stand-in"
printf '#!/bin/sh\necho "srun ran" >&2\nexit 99\n' > "$TMP/srun-stand-in/srun"
chmod +x "$TMP/srun-stand-in/srun"
: > "$TMP/nodelist.err"
for list in 'node[1-' 'node[2-1]' 'node[]' 'node[a-b]' 'node[1,,2]' 'node[1-2' ',' 'node]' \
  $'node\e[1' 'node[0-99999999]'; do
  for hosts in "" node1; do
    PATH=$TMP/srun-stand-in:$PATH SLURM_JOB_ID=7 SLURM_JOB_NODELIST=$list \
      expect 2 "$SPARKCTL" launch ${hosts:+-H "$hosts"} -- true
    contains "$TMP/err" "(in SLURM_JOB_NODELIST)"
    [ "$(wc -l < "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "not one line for '$list' -H '$hosts'"; }
    cat "$TMP/err" >> "$TMP/nodelist.err"
  done
done
contains "$TMP/nodelist.err" "sparkctl launch: invalid host range 'node[1-': no ']' after '[' (in SLURM_JOB_NODELIST)"
contains "$TMP/nodelist.err" 'invalid host range '\''node\x1b[1'\'''
no_controls "$TMP/nodelist.err"
# A step whose task 1 could not run the agent, and whose node0 says only
# that the step was cancelled (as once seen under load): node1 is named,
# with its remedy and slurmstepd's line.
cat > "$TMP/srun-stand-in/srun" << 'EOF2'
#!/bin/sh
echo "1: slurmstepd-node1: error: execve(): /nonexistent/sparkctl: No such file or directory" >&2
echo "srun: error: node1: task 1: Exited with exit code 2" >&2
echo "0: slurmstepd-node0: error: *** STEP 7.0 ON node0 CANCELLED AT 2026-11-29T00:03:51 ***" >&2
echo "srun: error: node0: task 0: Exited with exit code 2" >&2
exit 2
EOF2
PATH=$TMP/srun-stand-in:$PATH SLURM_JOB_ID=7 SLURM_JOB_NODELIST='node[0-1]' \
  expect 3 "$SPARKCTL" launch --remote-sparkctl /nonexistent/sparkctl -- true
contains "$TMP/err" "sparkctl launch: cannot start on node1: no sparkctl at /nonexistent/sparkctl there (sparkctl deploy -H node1, or --remote-sparkctl PATH): slurmstepd-node1: error: execve(): /nonexistent/sparkctl: No such file or directory"
contains "$TMP/err" "the job failed on node1"
lacks "$TMP/err" "cannot start on node0"

. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
for tool in slurmctld slurmd srun salloc sbatch scancel unshare nsenter; do
  command -v $tool > /dev/null || {
    [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "no $tool (scripts/setup installs Slurm)"
    skip "no $tool"
  }
done
. "$SRCDIR/tests/slurm/slurm.sh"
cluster_up 2
slurm_cluster_up
export TMPDIR=$TMP
mkdir -p "$TMP/work" "$TMP/r"
cd "$TMP/work"


# Every process of the test's jobs carries T1320_MARK (salloc and sbatch pass
# the environment on to the job, srun to its tasks, the agents to the ranks).
# marked: "pid cmdline" of each live one; zombies do not count.
marked() {
  local f pid state
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}
    pid=${pid%/environ}
    grep -qz '^T1320_MARK=' "$f" 2> /dev/null || continue
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2> /dev/null | cut -c1) || continue
    [ "$state" = Z ] || echo "$pid $(tr '\0' ' ' < "/proc/$pid/cmdline" 2> /dev/null)"
  done
  return 0
}
# marked_only_by PATTERN: no marked process but those whose command matches.
marked_only_by() { [ -z "$(marked | grep -vE -- "$1")" ]; }
none_marked() { [ -z "$(marked)" ]; }
# within S CMD...: CMD succeeds within S seconds of the clock (a scan of /proc
# takes a while on a busy machine: a count of tries would not bound it).
within() {
  local end=$((SECONDS + $1))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.05
  done
}
# no_survivors WHAT: no process of the job within 20 s.
no_survivors() {
  within 20 none_marked && return 0
  marked >&2
  fail "processes of the job survived $1"
}
nr_started() { [ "$(find "$TMP/r" -name 'started.*' | wc -l)" -ge "$1" ]; }
# job: salloc's or sbatch's command, in the clients' namespace, marked.
# (bounded: a job that does not end fails the test, it does not hang it)
job() { slurm_client env T1320_MARK=1 timeout 120 "$@"; }
# batch_done ID: the batch job ID has left the queue.
batch_done() { [ -z "$(slurm_client squeue -h -j "$1" -o %i 2> /dev/null)" ]; }
# sbatch_wait OUT SCRIPT_ARGS...: submit, wait for the end (at most 120 s), its
# output in OUT; the job's id in $jobid.
sbatch_wait() {
  local out=$1
  shift
  jobid=$(job sbatch --parsable -N 2 -o "$out" "$@") || fail "sbatch $*"
  wait_until 120 "batch job $jobid to end" batch_done "$jobid"
}

# The cluster authenticates with the test's munged, and has a GPU Gres per node.
slurm_client scontrol show config > "$TMP/config"
grep -qE '^AuthType += auth/munge$' "$TMP/config" || fail "the cluster's AuthType is not auth/munge"
grep -qE '^GresTypes += gpu$' "$TMP/config" || fail "the cluster's GresTypes is not gpu"

# ---- salloc: the rank variables and each node's environment (the job asks
# for each node's GPU: the step's tasks have it)
expect 0 job salloc -N 2 --gres=gpu:1 "$SPARKCTL" launch -N 2 --log-dir "$TMP/logs" -- sh -c \
  'env > "$0/env.$RANK"; hostname > "$0/host.$RANK"; pwd > "$0/pwd.$RANK"; echo "hello from $RANK"' \
  "$TMP/r"
for r in 0 1 2 3; do contains "$TMP/out" "[$r] hello from $r"; done
contains "$TMP/err" "4 ranks ended with status 0"
contains "$TMP/err" "ran as Slurm step"
grep -qE '^ +3 node1 +exit 0 ' "$TMP/err" || { cat "$TMP/err" >&2; fail "no summary row for rank 3 on node1"; }
"$PYTHON" - "$TMP/r" "$TMP/work" "$TMP" <<'PY' || fail "rank environment under srun"
import sys
d, work, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
envs = {}
for r in range(4):
    e = envs[r] = dict(l.split("=", 1) for l in open("%s/env.%d" % (d, r)).read().splitlines() if "=" in l)
    node, local = divmod(r, 2)
    want = {"RANK": str(r), "LOCAL_RANK": str(local), "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2",
            "NODE_RANK": str(node), "GROUP_RANK": str(node), "GROUP_WORLD_SIZE": "2",
            # Slurm's own numbers agree with sparkctl's
            "SLURM_PROCID": str(r), "SLURM_LOCALID": str(local), "SLURM_NODEID": str(node),
            # node 0's fabric (bootstrap) address
            "MASTER_ADDR": "198.19.177.11",
            # the node's own tree (the TaskProlog) and its sparkctl env
            "SPARKCTL_ROOT": "%s/nodes/node%d" % (tmp, node),
            "NCCL_SOCKET_IFNAME": "=enp1s0f1np1", "GLOO_SOCKET_IFNAME": "enp1s0f1np1",
            "SPARKCTL_JOB_NODE": str(r),
            # the node's Gres (File=/dev/null), the job's and so its step's
            "SLURM_STEP_GPUS": "0",
            # the mark that finds the job's processes (marked())
            "T1320_MARK": "1"}
    for k, v in want.items():
        if e.get(k) != v:
            sys.exit("rank %d: %s=%r, expected %r" % (r, k, e.get(k), v))
    assert "NCCL_IB_HCA" in e, "rank %d has no NCCL_IB_HCA" % r
    assert open("%s/pwd.%d" % (d, r)).read().strip() == work, "rank %d cwd" % r
    assert open("%s/host.%d" % (d, r)).read().strip() == "node%d" % node, "rank %d host" % r
assert len({envs[r]["MASTER_PORT"] for r in range(4)}) == 1, "MASTER_PORT differs"
assert len({envs[r]["SPARKCTL_JOB_ID"] for r in range(4)}) == 1, "job ids differ"
PY
no_survivors "a clean job"
# summary.json: the same, with the step that ran it.
json_valid launch-summary "$TMP/logs/summary.json"
"$PYTHON" - "$TMP/logs/summary.json" <<'PY' || fail "summary.json under srun"
import json, re, sys
s = json.load(open(sys.argv[1]))
assert s["outcome"] == "ok" and s["master_addr"] == "198.19.177.11", s
assert re.fullmatch(r"[0-9]+\.0", s["slurm_step"]), s["slurm_step"]
assert [u["host"] for u in s["units"]] == ["node0", "node0", "node1", "node1"], s["units"]
PY
contains "$TMP/logs/rank-3.log" "hello from 3"

# A line longer than 16 KiB comes in pieces, each whole; a last line without
# its newline gets one; stderr stays stderr.
expect 0 job salloc -N 2 "$SPARKCTL" launch -- sh -c \
  'head -c 20000 /dev/zero | tr "\\0" x; echo; echo "to stderr $RANK" >&2; printf "no newline $RANK"'
"$PYTHON" - "$TMP/out" <<'PY' || { head -c 300 "$TMP/out" >&2; fail "long and unfinished lines under srun"; }
import sys
lines = open(sys.argv[1]).read().split("\n")
for r in (0, 1):
    mine = [l[len("[%d] " % r):] for l in lines if l.startswith("[%d] " % r)]
    assert mine[:2] == ["x" * 16384, "x" * (20000 - 16384)], "rank %d: %r" % (r, [len(m) for m in mine])
    assert mine[2] == "no newline %d" % r, mine[2:]
PY
contains "$TMP/err" "[1] to stderr 1"
lacks "$TMP/out" "to stderr"

# ---- sbatch: the same from a batch script, --tag-output, -H a subset
cat > "$TMP/batch.sh" << EOF2
#!/bin/sh
"$SPARKCTL" launch --tag-output -- sh -c 'echo "rank \$RANK of \$WORLD_SIZE on \$(hostname)"'
echo "launch exited \$?"
"$SPARKCTL" launch -H node1 -N 2 -- sh -c 'echo "subset \$RANK \$NODE_RANK \$(hostname)"'
echo "launch exited \$?"
"$SPARKCTL" launch -H node1,node0 --tag-output -- sh -c 'echo "order \$RANK \$(hostname)"'
echo "launch exited \$?"
EOF2
sbatch_wait "$TMP/batch.out" "$TMP/batch.sh"
contains "$TMP/batch.out" "[node0:0] rank 0 of 2 on node0"
contains "$TMP/batch.out" "[node1:1] rank 1 of 2 on node1"
contains "$TMP/batch.out" "[1] subset 1 0 node1"
lacks "$TMP/batch.out" "node0 subset"
# -H in another order: ranks in the allocation's (Slurm numbers the nodes so).
contains "$TMP/batch.out" "[node0:0] order 0 node0"
contains "$TMP/batch.out" "[node1:1] order 1 node1"
[ "$(grep -c 'launch exited 0' "$TMP/batch.out")" = 3 ] || { cat "$TMP/batch.out" >&2; fail "a launch in the batch job failed"; }
no_survivors "a batch job"

# ---- a failed rank ends all ranks; launch exits with its status
rm -f "$TMP"/r/*
expect 7 job salloc -N 2 "$SPARKCTL" launch -N 2 --grace 2 -- sh -c \
  'touch "$0/started.$RANK"; if [ "$RANK" = 3 ]; then while [ "$(ls "$0" | wc -l)" -lt 4 ]; do sleep 0.05; done; exit 7; fi; exec sleep 300' \
  "$TMP/r"
contains "$TMP/err" "rank 3 on node1 ended with exit 7; the job was ended"
no_survivors "a failed rank"

# ---- SIGINT, then SIGKILL, to the launcher: nothing of the job is left
# while the allocation is still held (its end would end the step anyway).
cat > "$TMP/hold.sh" << EOF2
#!/bin/sh
# The launcher, its pid first; then the allocation stays until released.
sh -c 'echo \$\$ > "$TMP/launch.pid"; exec "\$@"' sh "$SPARKCTL" launch -N 2 -- sh -c 'touch "\$0/started.\$RANK"; exec sleep 300' "$TMP/r"
echo "launch exited \$?" > "$TMP/launch.status"
while [ ! -e "$TMP/release" ]; do sleep 0.05; done
EOF2
chmod +x "$TMP/hold.sh"
for sig in INT KILL; do
  rm -f "$TMP"/r/* "$TMP/launch.pid" "$TMP/launch.status" "$TMP/release"
  job salloc -N 2 "$TMP/hold.sh" > "$TMP/hold.out" 2>&1 &
  salloc_pid=$!
  wait_until 60 "4 ranks to start" nr_started 4
  kill -"$sig" "$(cat "$TMP/launch.pid")"
  wait_until 30 "the launcher to end" test -s "$TMP/launch.status"
  # Only salloc and the holding script are left.
  within 20 marked_only_by 'salloc|hold\.sh|sleep 0\.05' \
    || { marked >&2; fail "processes of the job survived SIG$sig to the launcher"; }
  touch "$TMP/release"
  wait "$salloc_pid" || :
  case $sig in
    INT) contains "$TMP/launch.status" "launch exited 130" ;;
    KILL) contains "$TMP/launch.status" "launch exited 137" ;;
  esac
  no_survivors "SIG$sig to the launcher"
done

# ---- scancel ends the job: nothing is left
rm -f "$TMP"/r/*
cat > "$TMP/long.sh" << EOF2
#!/bin/sh
"$SPARKCTL" launch -N 2 -- sh -c 'touch "\$0/started.\$RANK"; exec sleep 300' "$TMP/r"
EOF2
jobid=$(job sbatch --parsable -N 2 -o "$TMP/long.out" "$TMP/long.sh") || fail "sbatch"
wait_until 60 "4 ranks to start" nr_started 4
slurm_client scancel "$jobid"
wait_until 60 "the cancelled job to end" batch_done "$jobid"
no_survivors "scancel"

# ---- --no-slurm inside an allocation: ssh
expect 0 job salloc -N 2 "$SPARKCTL" launch --no-slurm -H node0,node1 -- sh -c \
  'echo "procid ${SLURM_PROCID:-none} ${SSH_CONNECTION:+over-ssh}"'
contains "$TMP/out" "[1] procid none over-ssh"
lacks "$TMP/err" "Slurm step"
# -H this host alone is this host's job, not the allocation's to place.
expect 0 job salloc -N 1 "$SPARKCTL" launch -H localhost -- sh -c 'echo "procid ${SLURM_PROCID:-none}"'
contains "$TMP/out" "[0] procid none"

# ---- DDP (Gloo) from sbatch to completion
if /usr/bin/python3 -c 'import torch.distributed' 2> /dev/null; then
  # Then one torchrun per node (--node_rank from Slurm's node), and 'bench
  # ddp', whose runs are 'sparkctl launch -H' on subsets of the allocation.
  # Its launches are --quiet (no "ran as Slurm step"): an srun first in PATH
  # writes down each step asked for, then is the real one.
  mkdir -p "$TMP/srun-noted"
  cat > "$TMP/srun-noted/srun" << EOF2
#!/bin/sh
echo "\$*" >> "$TMP/srun.calls"
exec $(command -v srun) "\$@"
EOF2
  chmod +x "$TMP/srun-noted/srun"
  cat > "$TMP/ddp.sh" << EOF2
#!/bin/sh
PATH=$TMP/srun-noted:\$PATH
"$SPARKCTL" launch -N 2 -- /usr/bin/python3 "$SRCDIR/examples/ddp_train.py" --backend gloo --steps 150 --timeout 60
echo "launch exited \$?"
"$SPARKCTL" launch -N 2 --torchrun -- "$SRCDIR/examples/ddp_train.py" --backend gloo --steps 50 --timeout 60
echo "torchrun exited \$?"
SPARKCTL_DATA_DIR=$SRCDIR/share SPARKCTL_PYTHON=/usr/bin/python3 "$SPARKCTL" bench ddp --nodes 1,2 \
  --params 200k --batch 16 --steps 12 --warmup 2 -o "$TMP/bench-ddp.json"
echo "bench ddp exited \$?"
EOF2
  sbatch_wait "$TMP/ddp.out" "$TMP/ddp.sh"
  contains "$TMP/ddp.out" "[0] identical parameters on all 4 ranks"
  contains "$TMP/ddp.out" "launch exited 0"
  contains "$TMP/ddp.out" "torchrun exited 0"
  contains "$TMP/ddp.out" "[node0] identical parameters on all 4 ranks"
  contains "$TMP/ddp.out" "bench ddp exited 0"
  "$PYTHON" - "$TMP/bench-ddp.json" <<'PY' || { cat "$TMP/ddp.out" >&2; fail "bench ddp's runs under srun"; }
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["hosts"] for r in runs] == ["node0", "node0,node1"], [r["hosts"] for r in runs]
PY
  # The steps of the job: the two launches on both nodes, then bench ddp's
  # runs, each as a step of its own: on node0, then on node0 and node1.
  "$PYTHON" - "$TMP/srun.calls" <<'PY' || { cat "$TMP/srun.calls" >&2; fail "bench ddp's runs were not Slurm steps"; }
import sys
calls = [l.split() for l in open(sys.argv[1]).read().splitlines()]
def arg(c, name):
    return next((a.split("=", 1)[1] for a in c if a.startswith(name + "=")), None)
got = [(arg(c, "--nodes"), arg(c, "--nodelist")) for c in calls]
assert got == [("2", None), ("2", None), ("1", "node0"), ("2", "node0,node1")], got
PY
  # Slurm's own word: node1's slurmd started step 3 (bench ddp's 2-node run), not 2.
  grep -qF "launch task StepId=$jobid.3 " "$SLURM_DIR/slurmd.node1.log" \
    || { cat "$SLURM_DIR/slurmd.node1.log" >&2; fail "node1 ran no step $jobid.3"; }
  lacks "$SLURM_DIR/slurmd.node1.log" "launch task StepId=$jobid.2 "
  grep -qE '^\[3\] rank 3/4 local_rank 1 backend gloo .* master 198\.19\.177\.11:' "$TMP/ddp.out" \
    || { cat "$TMP/ddp.out" >&2; fail "rank 3 did not start as rank 3 of 4 with master on node0's fabric"; }
elif [ "${SPARKCTL_REQUIRE_TORCH:-}" = 1 ]; then
  fail "no PyTorch in /usr/bin/python3 (Debian package python3-torch)"
fi

# ---- bench nccl as a job's ranks under srun (the suite's stand-in CUDA and
# NCCL, which hold one rank: one node, one rank), as under ssh
expect 0 job salloc -N 1 -w node1 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 \
  "$SPARKCTL" launch -q -N 1 -- "$SPARKCTL" bench nccl -e 4K
contains "$TMP/out" "[0] # Out of bounds values : 0 OK"
contains "$TMP/out" "[0] #  Rank  0 Group  0 Pid"

# ---- no sparkctl where the tasks look for it: exit 3, a node named.  Both
# lack it; the first task to fail has the step cancelled, and the other's
# slurmstepd may say so after its own execve() error, or instead of it.
expect 3 job salloc -N 2 "$SPARKCTL" launch --remote-sparkctl /nonexistent/sparkctl -- true
grep -qE "^sparkctl launch: cannot start on node[01]: no sparkctl at /nonexistent/sparkctl there \(.*\): .*execve\(\)" "$TMP/err" ||
  { cat "$TMP/err" >&2; fail "no node said that it has no sparkctl"; }
no_survivors "tasks that could not start"

# ---- an allocation smaller than asked: one line, exit 2
expect 2 job salloc -N 1 -w node0 "$SPARKCTL" launch -H node0,node1 -- true
contains "$TMP/err" "2 nodes asked; the allocation (job"
[ "$(grep -c '^sparkctl launch:' "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "more than one line"; }
expect 2 job salloc -N 2 "$SPARKCTL" launch -N 5 -- true
contains "$TMP/err" "is smaller than asked"
contains "$TMP/err" "More processors requested than permitted"
[ "$(grep -c '^sparkctl launch:' "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "more than one line"; }
no_survivors "refused steps"

# ---- no slurmctld: one line, exit 3
slurm_ctld_stop
SLURM_JOB_ID=$jobid SLURM_JOB_NODELIST='node[0-1]' expect 3 job "$SPARKCTL" launch -- true
contains "$TMP/err" "srun could not start the job step: srun: error:"
contains "$TMP/err" "Unable to contact slurm controller"
[ "$(grep -c '^sparkctl launch:' "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "more than one line"; }
no_survivors "no slurmctld"
