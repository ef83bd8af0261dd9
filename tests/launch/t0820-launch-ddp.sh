#!/usr/bin/env bash
# A real distributed training with 'sparkctl launch': examples/ddp_train.py
# (PyTorch DistributedDataParallel, Gloo on CPU) with Debian's python3-torch
# across 2 namespace nodes x 2 ranks, each rank started by sparkctl, then
# through one torchrun per node.  The ranks rendezvous at node 0's fabric
# address and talk over the fabric interface the node's 'sparkctl env'
# names; the training converges and every rank ends with identical
# parameters.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
TORCH_PYTHON=/usr/bin/python3
if ! "$TORCH_PYTHON" -c 'import torch.distributed' 2> /dev/null; then
  [ "${SPARKCTL_REQUIRE_TORCH:-}" = 1 ] && fail "no PyTorch in $TORCH_PYTHON (Debian package python3-torch)"
  skip "no PyTorch in $TORCH_PYTHON (Debian package python3-torch)"
fi
cluster_up 2
hosts=$(cluster_hosts)
export TMPDIR=$TMP
cd "$TMP"
script=$SRCDIR/examples/ddp_train.py

# check_training OUT PREFIX: 4 ranks printed the same parameter digest, rank
# 0 found them identical and the loss fell.
check_training() {
  local digests
  digests=$(grep -oE '^\[[^]]+\] params sha256 [0-9a-f]{64}$' "$1" | awk '{ print $4 }')
  [ "$(echo "$digests" | wc -l)" = 4 ] || { cat "$1" >&2; fail "expected 4 parameter digests"; }
  [ "$(echo "$digests" | sort -u | wc -l)" = 1 ] || { cat "$1" >&2; fail "the ranks' parameters differ"; }
  contains "$1" "$2 identical parameters on all 4 ranks"
  grep -E "^$(printf '%s' "$2" | sed 's/[][]/\\&/g') final loss [0-9.]+ \(initial" "$1" > /dev/null \
    || { cat "$1" >&2; fail "no final loss from rank 0"; }
  lacks "$1" "did not converge"
}

# Each rank started by sparkctl, on the Gloo interface the node's env names.
expect 0 timeout 240 "$SPARKCTL" launch -H "$hosts" -N 2 -- "$TORCH_PYTHON" "$script" \
  --backend gloo --steps 150 --timeout 60
check_training "$TMP/out" "[0]"
for r in 0 1 2 3; do
  grep -qE "^\[$r\] rank $r/4 local_rank $((r % 2)) backend gloo .* master 198\.19\.177\.11:" "$TMP/out" \
    || { cat "$TMP/out" >&2; fail "rank $r did not start as rank $r of 4 with master on node0's fabric"; }
done
contains "$TMP/err" "4 ranks ended with status 0"

# One torchrun per node, static rendezvous filled in by sparkctl.  Debian
# 12's torchrun (PyTorch 1.13 on Python 3.11) cannot parse its own default
# --redirects/--tee of 0 there: sparkctl finds that torch on each node and
# works around it, with no option from the user.
command -v torchrun > /dev/null || fail "no torchrun (it comes with python3-torch)"
expect 0 timeout 240 "$SPARKCTL" launch -H "$hosts" --nproc-per-node 2 --torchrun -- "$script" \
  --backend gloo --steps 150 --timeout 60
check_training "$TMP/out" "[node0]"
contains "$TMP/err" "2 nodes ended with status 0"
lacks "$TMP/out" "NoneType"

# The ranks see torchrun's variables with or without torchrun: each rank
# prints them, sorted by rank; the same values both ways but the port (one
# per job), the run id (torchrun's --rdzv_id, "none" by default; sparkctl's
# job id) and whether an agent hosts the store (torchrun's does).
cat > "$TMP/show_env.py" << 'PY'
import os
names = ("RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK GROUP_WORLD_SIZE ROLE_RANK "
         "ROLE_NAME ROLE_WORLD_SIZE MASTER_ADDR MASTER_PORT TORCHELASTIC_RESTART_COUNT "
         "TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_RUN_ID TORCHELASTIC_USE_AGENT_STORE "
         "OMP_NUM_THREADS").split()
# One write (under PIPE_BUF): a torchrun's ranks share its output, and
# print() writes the newline apart.
os.write(1, ("env " + " ".join("%s=%s" % (n, os.environ.get(n, "(unset)")) for n in names) + "\n").encode())
PY
# rank_env OUT: the ranks' lines, the varying values masked, sorted by rank.
rank_env() {
  grep -oE 'env RANK=.*' "$1" | sed -E 's/MASTER_PORT=[0-9]+/MASTER_PORT=P/; s/TORCHELASTIC_RUN_ID=[^ ]+/TORCHELASTIC_RUN_ID=ID/; s/TORCHELASTIC_USE_AGENT_STORE=[^ ]+/TORCHELASTIC_USE_AGENT_STORE=S/' | sort
}
expect 0 timeout 240 "$SPARKCTL" launch -H "$hosts" --nproc-per-node 2 -- "$TORCH_PYTHON" "$TMP/show_env.py"
job_id=$(grep -oE 'TORCHELASTIC_RUN_ID=[0-9a-f]{16} ' "$TMP/out" | sort -u)
[ "$(echo "$job_id" | wc -l)" = 1 ] || { cat "$TMP/out" >&2; fail "plain ranks: not one run id (the job's)"; }
[ "$(grep -c 'TORCHELASTIC_USE_AGENT_STORE=False OMP_NUM_THREADS=1$' "$TMP/out")" = 4 ] \
  || { cat "$TMP/out" >&2; fail "plain ranks: no agent store, OMP_NUM_THREADS=1"; }
rank_env "$TMP/out" > "$TMP/plain.env"
for r in 0 1 2 3; do
  contains "$TMP/plain.env" "env RANK=$r LOCAL_RANK=$((r % 2)) WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 GROUP_RANK=$((r / 2)) GROUP_WORLD_SIZE=2 ROLE_RANK=$r ROLE_NAME=default ROLE_WORLD_SIZE=4 MASTER_ADDR=198.19.177.11 MASTER_PORT=P TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0"
done
expect 0 timeout 240 "$SPARKCTL" launch -H "$hosts" --nproc-per-node 2 --torchrun -- "$TMP/show_env.py"
rank_env "$TMP/out" > "$TMP/torchrun.env"
same "$TMP/torchrun.env" "$TMP/plain.env"
