#!/usr/bin/env bash
# 'sparkctl launch' under Slurm: a real slurmctld and one slurmd per
# namespace node of tests/cluster/cluster.sh; jobs from salloc and sbatch
# run 'sparkctl launch', which starts the ranks as the tasks of one srun step.
. "$SRCDIR/tests/lib.sh"

# ---- without Slurm: the command line
expect 2 "$SPARKCTL" launch --slurm --no-slurm -- true
contains "$TMP/err" "--slurm and --no-slurm contradict each other"
env -u SLURM_JOB_ID "$SPARKCTL" launch --slurm -- true > "$TMP/out" 2> "$TMP/err" && fail "--slurm outside an allocation ran"
contains "$TMP/err" "not inside a Slurm allocation"
# --slurm with no srun to run: exit 3, one line.
PATH=/nonexistent SLURM_JOB_ID=7 SLURM_JOB_NODELIST=node0 expect 3 "$SPARKCTL" launch --slurm -- true
contains "$TMP/err" "no srun in PATH"
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "more than one line of error without srun"

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

slurm_client env T1320_MARK=1 salloc -N 2 "$SPARKCTL" launch -N 2 -- sh -c 'env > "$0/env.$RANK"; echo "hello from $RANK"' "$TMP/r" > "$TMP/out" 2> "$TMP/err" || { cat "$TMP/out" "$TMP/err"; fail "salloc launch"; }
cat "$TMP/out" "$TMP/err"
