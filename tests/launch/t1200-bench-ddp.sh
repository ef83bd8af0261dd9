#!/usr/bin/env bash
# 'sparkctl bench ddp' across 2 namespace nodes with Debian's python3-torch
# (gloo on CPU), each run through 'sparkctl launch': the 1-node and the
# 2-node runs complete with positive figures; the speedup is the ratio of
# the throughputs and the efficiency the speedup per node; comm and compute
# add up to the step time within the noise the run measured; the
# prediction is there and marked, to 10 nodes on a switch and for 3 on a
# ring at half the port; the JSON conforms to its schema; the transformer
# has the shape its parameter count says.  --strong keeps the global batch
# (a batch the ranks of a run do not divide is refused, naming the run), and
# its efficiency is the 1-node step over N times the N-node step.  Beside
# the buckets' busbw, bench nccl at the mean bucket size: "not measured"
# with the reason on gloo; on a run that used NCCL (a stand-in worker that
# says so), bench nccl runs through launch on the same hosts and its
# failure is the reason, or it is skipped with --no-nccl-compare.  A
# --params that would not fit in memory is refused (2), a torch that is
# missing on the nodes is named (3), as is the NCCL of a CUDA torch built
# without it; a node that cannot be reached is 3, a run past --job-timeout
# 5 with nothing of it left, a rank that fails 1.  The memory check on the stand-in
# NVIDIA libraries (tests/fake): GPUs with their own memory (H100) hold a
# rank each against NVML's free memory less a tenth, and the host the
# model each rank builds; unified memory (GB10) and no NVML keep
# MemAvailable; -N beyond the GPUs is refused.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"
. "$SRCDIR/tests/cluster/cluster.sh"

# memcheck PROFILE EXIT ARGS...: bench ddp on this node as the stand-ins'
# PROFILE describes it, MemAvailable the Spark fixture's (121583928 kB,
# three quarters 93.4 GB); a check passed ends at the missing worker (3).
memcheck() {
  local profile=$1 want=$2; shift 2
  expect "$want" fake "$profile" env SPARKCTL_ROOT="$SRCDIR/tests/fixtures/spark-1cable" \
    SPARKCTL_DATA_DIR="$TMP/no-worker" SPARKCTL_CLUSTER=none "$SPARKCTL" bench ddp -H localhost "$@"
  [ "$want" != 3 ] || contains "$TMP/err" "no worker"
  [ "$(grep -c . "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "one line expected"; }
}
# fp32, 16 bytes of state per parameter: 5G is 80.0 GB per rank.  An H100
# of 85.5 GB (85.0 free) holds 76.5 GB: refused there, though MemAvailable
# would take it; a GB10's unified memory takes it from MemAvailable.
memcheck h100x8 2 --params 5G --batch 1
contains "$TMP/err" "--params 5G --batch 1: a rank needs about 80.0 GB, GPU 0 (NVIDIA H100 80GB HBM3) has 85.0 GB free of 85.5 GB, less a tenth kept free: 76.5 GB"
memcheck gb10 3 --params 5G --batch 1
memcheck nvml-init-fails 3 --params 5G --batch 1
# 6G, 96 GB: more than three quarters of MemAvailable on unified memory.
memcheck gb10 2 --params 6G --batch 1
contains "$TMP/err" "1 rank of about 96.0 GB each would not fit in 93.4 GB, three quarters of MemAvailable"
memcheck nvml-init-fails 2 --params 6G --batch 1
contains "$TMP/err" "would not fit in 93.4 GB, three quarters of MemAvailable"
# 4G, 64 GB: on an H100; 8 ranks on 8 of them, but not the 8 x 16 GB that
# they build on the host first; a rank per GPU, not 9 on 8.
memcheck h100x8 3 --params 4G --batch 1
memcheck h100x8 2 --params 4G --batch 1 -N 8
contains "$TMP/err" "--params 4G: 8 ranks building the model on the host, 16.0 GB each, would not fit in 93.4 GB"
memcheck h100x8 3 --params 1G --batch 1 -N 8
memcheck h100x8 2 -N 9
contains "$TMP/err" "-N 9: this node has 8 GPUs, one per rank"
memcheck gb10 2 -N 2
contains "$TMP/err" "-N 2: this node has 1 GPU, one per rank"
# --gpus: the last run's GPUs on the first host, against its GPUs.
memcheck h100x8 3 --gpus 1,2,8 --params 1G --batch 1
memcheck h100x8 2 --gpus 1,2,16
contains "$TMP/err" "--gpus 16: this node has 8 GPUs, one per rank"
memcheck h100x8 2 --gpus 1,8 --params 4G --batch 1
contains "$TMP/err" "--params 4G: 8 ranks building the model on the host, 16.0 GB each, would not fit in 93.4 GB"

cluster_require
TORCH_PYTHON=/usr/bin/python3
if ! "$TORCH_PYTHON" -c 'import torch.distributed' 2> /dev/null; then
  [ "${SPARKCTL_REQUIRE_TORCH:-}" = 1 ] && fail "no PyTorch in $TORCH_PYTHON (Debian package python3-torch)"
  skip "no PyTorch in $TORCH_PYTHON (Debian package python3-torch)"
fi
export SPARKCTL_DATA_DIR=$SRCDIR/share SPARKCTL_PYTHON=$TORCH_PYTHON
cd "$TMP"

# Refused before any node is reached: a model of 10^12 parameters.
# (The stand-in GB10: this host's GPU, if it has one, does not change the answer.)
expect 2 fake gb10 "$SPARKCTL" bench ddp -H node0 --params 1T
contains "$TMP/err" "would not fit in"
contains "$TMP/err" "MemAvailable"
expect 2 "$SPARKCTL" bench ddp -H node0 --params 12q
contains "$TMP/err" "bad --params '12q'"
expect 2 "$SPARKCTL" bench ddp -H node0 --gpus 1,2 --nodes 1
contains "$TMP/err" "--gpus counts GPUs of the first host: not with --nodes or -N"
expect 2 "$SPARKCTL" bench ddp -H node0 --gpus 1,2 -N 2
contains "$TMP/err" "--gpus counts GPUs of the first host: not with --nodes or -N"
expect 2 "$SPARKCTL" bench ddp -H node0 --gpus 2,4
contains "$TMP/err" "--gpus 2,4: the first run is on 1 GPU, the baseline"
expect 2 "$SPARKCTL" bench ddp -H node0 --gpus 1,65
contains "$TMP/err" "--gpus 1,65: 64 GPUs at most"
expect 2 "$SPARKCTL" bench ddp -H node0,node1 --nodes 2
contains "$TMP/err" "the first run is on 1 node"
expect 2 "$SPARKCTL" bench ddp -H node0,node1 --nodes 1,3
contains "$TMP/err" "--nodes 1,3: 2 nodes given"
expect 2 "$SPARKCTL" bench ddp -H node0,node1 --nodes 1,2 -N 2 --strong --batch 6
contains "$TMP/err" "--strong --batch 6: the 4 ranks of the 2-node run do not divide it"

cluster_up 2
hosts=$(cluster_hosts)

# Small and short: a 4-layer MLP of about 200k parameters, 12 timed steps.
expect 0 timeout 240 "$SPARKCTL" bench ddp -H "$hosts" --nodes 1,2 --params 200k --batch 16 \
  --steps 12 --warmup 2 -o "$TMP/ddp.json"
cp "$TMP/out" "$TMP/ddp.txt"
json_valid bench-ddp "$TMP/ddp.json"
contains "$TMP/ddp.txt" "gloo on cpu"
contains "$TMP/ddp.txt" "in place, on the run's hosts and ranks: not measured: gloo on cpu: no NCCL"
grep -qE '^ +1 +1 +node0 ' "$TMP/ddp.txt" || { cat "$TMP/ddp.txt" >&2; fail "no 1-node row"; }
grep -qE '^ +2 +2 +node0,node1 ' "$TMP/ddp.txt" || { cat "$TMP/ddp.txt" >&2; fail "no 2-node row"; }
grep -qE '^2 nodes: speedup [0-9.]+, efficiency [0-9.]+%; lost -?[0-9.]+% = comm -?[0-9.]+% \+ rest -?[0-9.]+%$' "$TMP/ddp.txt" \
  || { cat "$TMP/ddp.txt" >&2; fail "no split of the lost efficiency"; }
contains "$TMP/ddp.txt" "predicted, not measured, from the 1 -> 2 node runs (weak scaling); overlap as measured:"
contains "$TMP/ddp.txt" "step = compute + comm + REST of the 2-node run ("
contains "$TMP/ddp.txt" "ring: 3 nodes only"
grep -qE '^switch +10 +10 .* predicted$' "$TMP/ddp.txt" || { cat "$TMP/ddp.txt" >&2; fail "no predicted row for 10 nodes"; }
grep -qE '^ring +3 +3 .* predicted$' "$TMP/ddp.txt" || { cat "$TMP/ddp.txt" >&2; fail "no predicted row for the ring"; }
no_trailing_blanks "$TMP/ddp.txt"

/usr/bin/python3 - "$TMP/ddp.json" << 'PY' || fail "the figures of bench ddp are not consistent"
import json, sys
d = json.load(open(sys.argv[1]))
one, two = d["runs"]
def check(cond, what):
    if not cond:
        sys.exit("bench ddp: %s\n%s" % (what, json.dumps(d, indent=1)))
check((one["nodes"], one["ranks"], two["nodes"], two["ranks"]) == (1, 1, 2, 2), "the runs")
check(d["scaling"] == "weak" and d["batch_per_rank"] == 16, "weak scaling")
check([(r["batch_per_rank"], r["global_batch"]) for r in d["runs"]] == [(16, 16), (16, 32)],
      "the same batch per rank")
check(d["backend"] == "gloo" and d["device"] == "cpu", "gloo on the CPU")
check(d["width"] ** 2 * 4 + d["width"] * 4 == d["params"] <= 200000, "the MLP's parameters")
check(d["grad_bytes"] == 4 * d["params"], "fp32 gradients")
for r in d["runs"]:
    for k in ("step_p50_us", "step_p95_us", "samples_per_second", "compute_us"):
        check(r[k] > 0, "%s of %d nodes is positive" % (k, r["nodes"]))
    check(r["step_p95_us"] >= r["step_p50_us"], "p95 >= p50")
    check(r["buckets"] >= 1, "the hook saw a bucket per step")
    # Throughput is ranks x batch per p50 step.
    check(abs(r["samples_per_second"] - r["ranks"] * 16 * 1e6 / r["step_p50_us"])
          <= 0.01 * r["samples_per_second"], "samples/s of the step time")
check(two["comm_us"] > 0, "a measured all-reduce on 2 nodes")
check(two["busbw_gbytes_per_second"] > 0 and one["busbw_gbytes_per_second"] is None, "busbw")
nc = d["nccl_compare"]
check(nc["measured"] is False and nc["reason"] == "gloo on cpu: no NCCL", "no NCCL on gloo")
check(nc["op"] == "all_reduce" and nc["dtype"] == "float", "bench nccl's op and type")
check(nc["size_bytes"] == d["grad_bytes"] // two["buckets"] // 4 * 4, "the mean bucket")
check(all(r["nccl_busbw_gbytes_per_second"] is None for r in d["runs"]), "no NCCL figure")
# Speedup is the ratio of throughputs; efficiency the speedup per node.
check(one["speedup"] == 1 and one["efficiency_ratio"] == 1, "the baseline is 1")
check(abs(two["speedup"] - two["samples_per_second"] / one["samples_per_second"]) < 1e-3,
      "speedup = S_2 / S_1")
check(abs(two["efficiency_ratio"] - two["speedup"] / 2) < 1e-3, "efficiency = speedup / 2")
check(abs(two["lost_comm_ratio"] + two["lost_other_ratio"] - (1 - two["efficiency_ratio"])) < 1e-3,
      "the lost efficiency is comm + rest")
# The split adds up: step = compute + comm + other, other within what the
# run itself shows as noise (the spread of its steps, p95 - p50) plus the
# comm it may have hidden behind the backward pass.
for r in d["runs"]:
    check(abs(r["step_p50_us"] - r["compute_us"] - r["comm_us"] - r["other_us"]) < 1,
          "other = step - compute - comm")
    noise = r["step_p95_us"] - r["step_p50_us"]
    check(-r["comm_us"] - noise <= r["other_us"] <= noise + 0.5 * r["step_p50_us"],
          "comm + compute is the step of %d nodes within the noise (%.0f us)" % (r["nodes"], noise))
check([(x["plan"], x["nodes"]) for x in d["predicted"]] ==
      [("switch", n) for n in range(3, 11)] + [("ring", 3)], "predicted: switch 3 to 10, ring 3")
check(all(x["predicted"] is True for x in d["predicted"]), "every predicted row is marked")
check(d["overlap_assumption"] == "measured" and d["predicted_from_nodes"] == 2, "what the prediction assumes")
check(abs(d["rest_us"] - two["other_us"]) <= 0.2, "the rest carried over is the 2-node run's")
plans = {x["plan"]: x for x in d["prediction_plans"]}
check((plans["switch"]["min_nodes"], plans["switch"]["max_nodes"], plans["ring"]["min_nodes"],
       plans["ring"]["max_nodes"]) == (3, 10, 3, 3), "the node counts of each plan")
check(plans["ring"]["link_ratio"] == 0.5 and plans["switch"]["link_ratio"] == 1, "the plans' links")
ring = [x for x in d["predicted"] if x["plan"] == "ring"][0]
p = [x for x in d["predicted"] if x["plan"] == "switch"]
# Half the busbw, twice the comm of the same 3 nodes on a switch.
check(abs(ring["comm_us"] - 2 * p[0]["comm_us"]) < 1, "ring: each link at half the port")
check(abs(ring["busbw_gbytes_per_second"] - two["busbw_gbytes_per_second"] / 2) < 1e-3, "ring busbw")
for x in p + [ring]:
    check(abs(x["step_us"] - max(x["compute_us"] + x["comm_us"] + d["rest_us"], x["compute_us"], x["comm_us"])) < 1,
          "a predicted step is compute + comm + the 2-node rest, at least the longer of the two")
    check(x["compute_us"] == two["compute_us"], "compute as measured on 2 nodes")
# The ring sends 2(N-1)/N of the bytes: the comm grows, more slowly each node.
comms = [two["comm_us"]] + [x["comm_us"] for x in p]
check(all(b > a for a, b in zip(comms, comms[1:])), "comm grows with the nodes")
check(abs(p[5]["comm_us"] - two["comm_us"] * 1.75) < 1, "8 nodes: 1.75 x the comm of 2")
check(abs(p[-1]["comm_us"] - two["comm_us"] * 1.8) < 1, "10 nodes: 1.8 x the comm of 2")
PY

# --gpus: ranks of one node stand for nodes of one GPU (here CPU ranks with
# gloo, as a GPU machine's GPUs): two launches on node0, -N 1 then -N 2.
expect 0 timeout 240 "$SPARKCTL" bench ddp -H "$hosts" --gpus 1,2 --params 200k --batch 16 \
  --steps 12 --warmup 2 -o "$TMP/gpus.json"
contains "$TMP/out" "--gpus: NODES counts GPUs of node0, each standing for a node of one GPU (a Spark)"
json_valid bench-ddp "$TMP/gpus.json"
/usr/bin/python3 - "$TMP/gpus.json" << 'PY' || fail "bench ddp --gpus"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus_as_nodes"] is True, d
assert [(r["nodes"], r["ranks"], r["hosts"]) for r in d["runs"]] == [(1, 1, "node0"), (2, 2, "node0")], d["runs"]
one, two = d["runs"]
assert abs(two["efficiency_ratio"] - two["samples_per_second"] / (2 * one["samples_per_second"])) < 1e-3, two
assert [x["nodes"] for x in d["predicted"] if x["plan"] == "switch"] == list(range(3, 11)), d["predicted"]
assert all(x["ranks"] == x["nodes"] for x in d["predicted"]), d["predicted"]
PY
expect 0 timeout 240 "$SPARKCTL" bench ddp -H "$hosts" --params 200k --batch 16 --steps 2 --warmup 1 \
  --nodes 1 --json
[ "$(json_get "$TMP/out" 'd["gpus_as_nodes"]')" = False ] || fail "gpus_as_nodes without --gpus"

# Strong scaling: a global batch of 32, 32 per rank on 1 node, 16 on 2.
expect 0 timeout 240 "$SPARKCTL" bench ddp -H "$hosts" --nodes 1,2 --params 200k --batch 32 \
  --strong --steps 12 --warmup 2 -o "$TMP/strong.json"
contains "$TMP/out" "strong scaling: global batch 32"
contains "$TMP/out" "from the 1 -> 2 node runs (strong scaling)"
json_valid bench-ddp "$TMP/strong.json"
/usr/bin/python3 - "$TMP/strong.json" << 'PY' || fail "the figures of bench ddp --strong are not consistent"
import json, sys
d = json.load(open(sys.argv[1]))
one, two = d["runs"]
def check(cond, what):
    if not cond:
        sys.exit("bench ddp --strong: %s\n%s" % (what, json.dumps(d, indent=1)))
check(d["scaling"] == "strong" and d["global_batch"] == 32 and "batch_per_rank" not in d, "strong")
check([(r["batch_per_rank"], r["global_batch"]) for r in d["runs"]] == [(32, 32), (16, 32)],
      "the same global batch, split over the ranks")
for r in d["runs"]:
    check(abs(r["samples_per_second"] - 32 * 1e6 / r["step_p50_us"]) <= 0.01 * r["samples_per_second"],
          "samples/s: the global batch per step")
# Efficiency S_2 / (2 S_1) = step_1 / (2 step_2).
check(abs(two["efficiency_ratio"] - one["step_p50_us"] / (2 * two["step_p50_us"])) < 1e-3,
      "efficiency = step_1 / (N step_N)")
check(abs(two["lost_comm_ratio"] + two["lost_other_ratio"] - (1 - two["efficiency_ratio"])) < 1e-3,
      "the lost efficiency is comm + rest")
sw = [x for x in d["predicted"] if x["plan"] == "switch"]
# The predicted compute shrinks with the batch per rank: 2/N of the 2-node one.
check(all(abs(x["compute_us"] - two["compute_us"] * 2 / x["nodes"]) < 1 for x in sw), "strong compute")
check(all(abs(x["samples_per_second"] - 32 * 1e6 / x["step_us"]) < 0.01 * x["samples_per_second"]
          for x in sw), "predicted samples/s of the global batch")
PY

# The transformer, on node1 alone: 2 encoder layers of width d, 12d^2 + 13d
# parameters each, d a multiple of 8.
expect 0 timeout 120 "$SPARKCTL" bench ddp -H node1 --model transformer --params 100k --batch 2 \
  --steps 2 --warmup 1 --json
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["width"]
assert d["model"] == "transformer" and w % 8 == 0, d
assert d["params"] == 2 * (12 * w * w + 13 * w) <= 100000 < 2 * (12 * (w + 8) ** 2 + 13 * (w + 8)), d
assert [r["nodes"] for r in d["runs"]] == [1] and d["runs"][0]["hosts"] == "node1" and d["predicted"] == [], d
' "$TMP/out" || fail "the transformer's shape"

# torch missing on the nodes: exit 3, and the line says what is missing.
printf '#!/bin/sh\nexec %s -S -I "$@"\n' "$TORCH_PYTHON" > "$TMP/no-torch-python"
chmod +x "$TMP/no-torch-python"
expect 3 env SPARKCTL_PYTHON="$TMP/no-torch-python" timeout 120 "$SPARKCTL" bench ddp -H "$hosts" \
  --params 50k --steps 2
contains "$TMP/err" "missing: torch"

# A torch with CUDA but without NCCL (a stand-in interpreter that makes
# this CPU torch say so, then runs the worker as 'python -c WORKER ARGS'):
# exit 3, NCCL named.
cat > "$TMP/no-nccl-python" << EOF
#!/bin/sh
[ "\$1" = -c ] || exit 64
exec $TORCH_PYTHON -c 'import sys, torch, torch.distributed as dist
torch.cuda.is_available = lambda: True
dist.is_nccl_available = lambda: False
code = sys.argv[2]
sys.argv = ["-c"] + sys.argv[3:]
exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})' "\$@"
EOF
chmod +x "$TMP/no-nccl-python"
expect 3 env SPARKCTL_PYTHON="$TMP/no-nccl-python" timeout 120 "$SPARKCTL" bench ddp -H "$hosts" \
  --params 50k --steps 2
contains "$TMP/err" "missing: NCCL"

# A node that cannot be reached: exit 3, the node named.
expect 3 timeout 120 "$SPARKCTL" bench ddp -H node0,nowhere.invalid --params 50k --steps 2
contains "$TMP/err" "nowhere.invalid"

# A run past --job-timeout: exit 5, and nothing of it is left on the nodes.
expect 5 timeout 120 "$SPARKCTL" bench ddp -H "$hosts" --params 50k --steps 100000 --job-timeout 3
contains "$TMP/err" "did not end within 3 s (--job-timeout)"
no_ranks_left() { ! { cluster_procs node0; cluster_procs node1; } | grep -q ddp_bench; }
wait_until 10 "the ranks of the timed-out run to end" no_ranks_left

# A rank that fails: exit 1, no figures.
mkdir "$TMP/failing-worker"
printf 'import os, sys\nsys.exit("rank %%s gave up" %% os.environ["RANK"])\n' > "$TMP/failing-worker/ddp_bench.py"
expect 1 env SPARKCTL_DATA_DIR="$TMP/failing-worker" timeout 120 "$SPARKCTL" bench ddp -H "$hosts" \
  --params 50k --steps 2
contains "$TMP/err" "rank 0 gave up"

# A run that used NCCL (a stand-in worker that says so): bench nccl at the
# bucket size runs on the same hosts through launch.  Here it has no GPU,
# so it fails, and that is the reason in the report; the figures of the
# runs stay, and so does the exit status.
mkdir "$TMP/nccl-worker"
cat > "$TMP/nccl-worker/ddp_bench.py" << 'PY'
import json, os, sys
a = dict(x[2:].split("=", 1) for x in sys.argv[1:])
n = int(a["steps"])
if os.environ["RANK"] == "0":
    print("sparkctl-ddp " + json.dumps({
        "world_size": int(os.environ["WORLD_SIZE"]), "backend": "nccl", "device": "cuda",
        "torch_version": "2.9.0", "params": 4000, "grad_bytes": 8000, "buckets": 2,
        "batch_per_rank": int(a["batch"]), "step_us": [1000.0] * n,
        "comm_us": [100.0] * n, "compute_us": [900.0] * n}))
PY
expect 0 env SPARKCTL_DATA_DIR="$TMP/nccl-worker" timeout 240 "$SPARKCTL" bench ddp -H "$hosts" \
  --params 50k --dtype bf16 --steps 2 -o "$TMP/nccl.json"
json_valid bench-ddp "$TMP/nccl.json"
/usr/bin/python3 - "$TMP/nccl.json" << 'PY' || fail "bench nccl beside an NCCL run"
import json, sys
d = json.load(open(sys.argv[1]))
nc = d["nccl_compare"]
assert d["backend"] == "nccl" and nc["dtype"] == "bfloat16" and nc["size_bytes"] == 4000, d
assert nc["measured"] is False, nc
assert nc["reason"].startswith("bench nccl on node0,node1 failed (exit "), nc
# The rank's own line says why, not launch's summary.
assert "sparkctl bench nccl" in nc["reason"], nc
assert [r["nccl_busbw_gbytes_per_second"] for r in d["runs"]] == [None, None], d["runs"]
assert d["runs"][1]["busbw_gbytes_per_second"] > 0, d["runs"]
PY
expect 0 env SPARKCTL_DATA_DIR="$TMP/nccl-worker" timeout 240 "$SPARKCTL" bench ddp -H "$hosts" \
  --params 50k --steps 2 --no-nccl-compare
contains "$TMP/out" "not measured: skipped (--no-nccl-compare)"

