#!/bin/bash
# bench/bench-ddp.sh - sparkctl bench ddp on 1, 2, ... GPUs of this machine,
# and how well the report's prediction, made from 2 GPUs, meets the largest.
#
#   bench/bench-ddp.sh [GPU_COUNTS]          (default "1 2 4")
#   ninja -C build bench-ddp
#
# Each GPU count is one run of 'sparkctl bench ddp -H localhost --nodes 1 -N
# COUNT' (on one machine the counts are ranks of one node).  Per model it
# prints step time, samples/s, speedup and efficiency across the runs, comm
# and compute per step, the buckets' busbw; then the prediction for the
# largest count from the 2-GPU run (compute as measured there plus a ring
# all-reduce of the gradients at its busbw plus the 2-GPU run's rest, at
# least the longer of compute and comm: the report's formula; and beside it
# with no overlap) against the measured step, and bench nccl's all_reduce busbw at the mean
# bucket size, which bench ddp itself measures on the same ranks (its NCCL
# GB/s column).
# Environment: SPARKCTL (build/sparkctl), SPARKCTL_PYTHON (python3 with torch),
# MODELS ("mlp --params 200M;transformer --params 300M"), BATCH (64),
# STEPS (30), DTYPE (bf16), OUT (a new temporary folder).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
SPARKCTL=${SPARKCTL:-$here/build/sparkctl}
counts=${1:-1 2 4}
MODELS=${MODELS:-mlp --params 200M;transformer --params 300M}
OUT=${OUT:-$(mktemp -d)}
export SPARKCTL_DATA_DIR=${SPARKCTL_DATA_DIR:-$here/share} SPARKCTL_CLUSTER=none
export SPARKCTL_PYTHON=${SPARKCTL_PYTHON:-$(command -v python3)}

IFS=';' read -r -a models <<< "$MODELS"
for model in "${models[@]}"; do
  name=${model%% *}
  for n in $counts; do
    # shellcheck disable=SC2086
    "$SPARKCTL" bench ddp -H localhost --nodes 1 -N "$n" --model $model --batch "${BATCH:-64}" \
      --steps "${STEPS:-30}" --dtype "${DTYPE:-bf16}" -q -o "$OUT/ddp-$name-$n.json" > /dev/null
  done
done
"$SPARKCTL_PYTHON" - "$OUT" "$counts" "${models[@]}" << 'PY'
import json, sys
out, counts, models = sys.argv[1], [int(c) for c in sys.argv[2].split()], sys.argv[3:]
for model in models:
    name = model.split()[0]
    runs = {n: json.load(open(f"{out}/ddp-{name}-{n}.json")) for n in counts}
    s1 = runs[counts[0]]["runs"][0]["samples_per_second"] / counts[0]
    print(f"{model}: {runs[counts[0]]['params']} parameters, {runs[counts[0]]['grad_bytes']} bytes of gradients")
    nc = runs[max(counts)]["nccl_compare"]
    print(f"  bench nccl all_reduce at {nc['size_bytes']} bytes (the mean bucket), {nc['dtype']}:"
          f" {'measured' if nc['measured'] else 'not measured: ' + nc['reason']}")
    print("  GPUS  STEP P50 ms  SAMPLES/S  SPEEDUP  EFFICIENCY  COMM ms  COMPUTE ms  BUSBW GB/s  NCCL GB/s")
    for n in counts:
        r = runs[n]["runs"][0]
        sp = r["samples_per_second"] / s1
        bw, nbw = r["busbw_gbytes_per_second"], r["nccl_busbw_gbytes_per_second"]
        print(f"  {n:4d}  {r['step_p50_us'] / 1000:11.2f}  {r['samples_per_second']:9.0f}  {sp:7.3f}  {sp / n:10.1%}"
              f"  {r['comm_us'] / 1000:7.2f}  {r['compute_us'] / 1000:10.2f}  {bw if bw is not None else '-':>10}"
              f"  {nbw if nbw is not None else '-':>9}")
    if 2 in counts and max(counts) > 2:
        n, r2 = max(counts), runs[2]["runs"][0]
        ring = 2 * (n - 1) / n * runs[2]["grad_bytes"] / (r2["busbw_gbytes_per_second"] * 1e9) * 1e3
        compute, rest = r2["compute_us"] / 1000, r2["other_us"] / 1000
        pred = max(compute + ring + rest, compute, ring)
        meas = runs[n]["runs"][0]["step_p50_us"] / 1000
        print(f"  predicted from 2 GPUs for {n}: step {pred:.2f} ms (compute {compute:.2f}"
              f" + ring {ring:.2f} + rest {rest:.2f}), measured {meas:.2f} ms: {(pred - meas) / meas:+.1%}"
              f"; with no overlap {compute + ring:.2f} ms: {(compute + ring - meas) / meas:+.1%}")
print(f"outputs in {out}")
PY
