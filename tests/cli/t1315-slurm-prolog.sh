#!/usr/bin/env bash
# sparkctl doctor --slurm-health as a real slurmd's Prolog (tests/slurm/slurm.sh):
# with a fabric fault on the node, a job that would land on it never runs:
# the node is drained with sparkctl's reason (Slurm keeps it) and the job is
# requeued and held; after the repair the health program resumes the node,
# and the released job runs there, the Prolog passing.
. "$SRCDIR/tests/lib.sh"
require_root
for tool in slurmctld slurmd scontrol sbatch munged mungekey unshare nsenter; do
  command -v $tool > /dev/null || fail "no $tool (scripts/setup installs Slurm)"
done
. "$SRCDIR/tests/slurm/slurm.sh"

slurm_ns ctl 198.18.0.1
slurm_munge_start
# slurmd runs the Prolog in an environment of its own: SLURMD_NODENAME names the node.
cat > "$SLURM_DIR/prolog.sh" << EOF2
#!/bin/sh
SPARKCTL_ROOT="$TMP/node0" SLURM_CONF="$SLURM_DIR/slurm.conf" exec "$SPARKCTL" doctor \
  --slurm-health >> "$SLURM_DIR/prolog.out" 2>&1
EOF2
chmod +x "$SLURM_DIR/prolog.sh"
# PrologFlags=Alloc: the Prolog runs when the job is given the node.
slurm_conf "SlurmctldHost=ctl(198.18.0.1)
NodeName=node0 NodeAddr=198.18.0.1 CPUs=1 RealMemory=1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES State=UP
Prolog=$SLURM_DIR/prolog.sh
PrologFlags=Alloc"
slurm_ctld_start
slurmd_start node0
cp -a "$FIXTURES/spark-2cable" "$TMP/node0"

# until COND... holds, at most 60 s; else show what Slurm says and fail with WHAT.
until_true() {
  local what=$1 _
  shift
  for _ in $(seq 300); do
    "$@" && return 0
    sleep 0.2
  done
  slurm_in scontrol show node node0 -o >&2
  slurm_in scontrol show job -o >&2 || :
  cat "$SLURM_DIR/prolog.out" >&2 2> /dev/null || :
  fail "$what"
}
node_has() { slurm_in scontrol show node node0 -o | grep -qF -- "$1"; }
job_has() { slurm_in scontrol show job "$job" -o | grep -qF -- "$1"; }
until_true "node0 never became IDLE" node_has " State=IDLE "

# ---- a fault: the Prolog drains the node; the job is held, and did not run
# The fabric fault: the twin of the cabled port rocep1s0f1 without carrier.
twin_carrier() { echo "$1" > "$TMP/node0/sys/class/net/enP2p1s0f1np1/carrier"; }
twin_carrier 0
job=$(slurm_in sbatch --parsable -o "$TMP/job.out" --wrap "echo ran on \$SLURMD_NODENAME")
until_true "the job was not requeued and held" job_has "Reason=launch_failed_requeued_held"
node_has "+DRAIN" || fail "node0 is not drained"
node_has "Reason=sparkctl: fabric.twins rocep1s0f1 is ACTIVE but its twin roceP2p1s0f1" ||
  fail "node0's reason is not sparkctl's"
contains "$SLURM_DIR/prolog.out" "node0: drained: sparkctl: fabric.twins"
[ ! -e "$TMP/job.out" ] || fail "the job ran on a failing node: $(cat "$TMP/job.out")"

# ---- the repair: the health program (HealthCheckProgram's run) resumes it
twin_carrier 1
expect 0 slurm_in env SPARKCTL_ROOT="$TMP/node0" SLURMD_NODENAME=node0 "$SPARKCTL" doctor \
  --slurm-health
contains "$TMP/out" "node0: resumed: every check passes (drained for: sparkctl: fabric.twins"
until_true "node0 was not resumed" node_has " State=IDLE "

# ---- released, the job runs there: the Prolog passes and leaves the node alone
# (A requeued job waits two minutes to be eligible again: now, for the test.)
slurm_in scontrol release "$job"
slurm_in scontrol update jobid="$job" starttime=now
until_true "the released job did not complete" job_has "JobState=COMPLETED"
contains "$TMP/job.out" "ran on node0"
contains "$SLURM_DIR/prolog.out" "node0: healthy: no check failed"
node_has " State=IDLE " || fail "node0 is not IDLE after the job"
