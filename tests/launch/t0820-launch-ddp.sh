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
# --redirects/--tee of 0 there; a mapping for a local rank that does not
# exist (9) leaves every real rank's output direct.
command -v torchrun > /dev/null || fail "no torchrun (it comes with python3-torch)"
torchrun_opts=()
if "$TORCH_PYTHON" -c 'import sys, torch; sys.exit(not (torch.__version__.startswith("1.") and sys.version_info >= (3, 11)))'; then
  torchrun_opts=(--torchrun-opt=--redirects=9:1 --torchrun-opt=--tee=9:1)
fi
expect 0 timeout 240 "$SPARKCTL" launch -H "$hosts" -N 2 --torchrun "${torchrun_opts[@]}" -- "$script" \
  --backend gloo --steps 150 --timeout 60
check_training "$TMP/out" "[node0]"
contains "$TMP/err" "2 nodes ended with status 0"
