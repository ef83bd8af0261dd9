#!/usr/bin/env bash
# 'sparkctl bench ddp' across 2 namespace nodes with Debian's python3-torch
# (gloo on CPU), each run through 'sparkctl launch': the 1-node and the
# 2-node runs complete with positive figures; the speedup is the ratio of
# the throughputs and the efficiency the speedup per node; comm and compute
# add up to the step time within the noise the run measured; the
# prediction is there and marked; the JSON conforms to its schema; the
# transformer has the shape its parameter count says.  A
# --params that would not fit in memory is refused (2), a torch that is
# missing on the nodes is named (3).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
TORCH_PYTHON=/usr/bin/python3
if ! "$TORCH_PYTHON" -c 'import torch.distributed' 2> /dev/null; then
  [ "${SPARKCTL_REQUIRE_TORCH:-}" = 1 ] && fail "no PyTorch in $TORCH_PYTHON (Debian package python3-torch)"
  skip "no PyTorch in $TORCH_PYTHON (Debian package python3-torch)"
fi
export SPARKCTL_DATA_DIR=$SRCDIR/share SPARKCTL_PYTHON=$TORCH_PYTHON
cd "$TMP"

# Refused before any node is reached: a model of 10^12 parameters.
expect 2 "$SPARKCTL" bench ddp -H node0 --params 1T
contains "$TMP/err" "would not fit in"
contains "$TMP/err" "MemAvailable"
expect 2 "$SPARKCTL" bench ddp -H node0 --params 12q
contains "$TMP/err" "bad --params '12q'"
expect 2 "$SPARKCTL" bench ddp -H node0,node1 --nodes 2
contains "$TMP/err" "the first run is on 1 node"
expect 2 "$SPARKCTL" bench ddp -H node0,node1 --nodes 1,3
contains "$TMP/err" "--nodes 1,3: 2 nodes given"

cluster_up 2
hosts=$(cluster_hosts)

# Small and short: a 4-layer MLP of about 200k parameters, 12 timed steps.
expect 0 timeout 240 "$SPARKCTL" bench ddp -H "$hosts" --nodes 1,2 --params 200k --batch 16 \
  --steps 12 --warmup 2 -o "$TMP/ddp.json"
cp "$TMP/out" "$TMP/ddp.txt"
json_valid bench-ddp "$TMP/ddp.json"
contains "$TMP/ddp.txt" "gloo on cpu"
grep -qE '^ +1 +1 +node0 ' "$TMP/ddp.txt" || { cat "$TMP/ddp.txt" >&2; fail "no 1-node row"; }
grep -qE '^ +2 +2 +node0,node1 ' "$TMP/ddp.txt" || { cat "$TMP/ddp.txt" >&2; fail "no 2-node row"; }
grep -qE '^2 nodes: speedup [0-9.]+, efficiency [0-9.]+%; lost -?[0-9.]+% = comm -?[0-9.]+% \+ rest -?[0-9.]+%$' "$TMP/ddp.txt" \
  || { cat "$TMP/ddp.txt" >&2; fail "no split of the lost efficiency"; }
contains "$TMP/ddp.txt" "predicted from the 1 -> 2 node measurement (overlap assumed: none"
no_trailing_blanks "$TMP/ddp.txt"

/usr/bin/python3 - "$TMP/ddp.json" << 'PY' || fail "the figures of bench ddp are not consistent"
import json, sys
d = json.load(open(sys.argv[1]))
one, two = d["runs"]
def check(cond, what):
    if not cond:
        sys.exit("bench ddp: %s\n%s" % (what, json.dumps(d, indent=1)))
check((one["nodes"], one["ranks"], two["nodes"], two["ranks"]) == (1, 1, 2, 2), "the runs")
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
p = d["predicted"]
check([x["nodes"] for x in p] == [3, 4, 5, 6, 7, 8], "predicted for 3 to 8 nodes")
check(d["overlap_assumption"] == "none" and d["predicted_from_nodes"] == 2, "what the prediction assumes")
for x in p:
    check(abs(x["step_us"] - x["compute_us"] - x["comm_us"]) < 1, "a predicted step is compute + comm")
    check(x["compute_us"] == two["compute_us"], "compute as measured on 2 nodes")
# The ring sends 2(N-1)/N of the bytes: the comm grows, more slowly each node.
comms = [two["comm_us"]] + [x["comm_us"] for x in p]
check(all(b > a for a, b in zip(comms, comms[1:])), "comm grows with the nodes")
check(abs(p[-1]["comm_us"] - two["comm_us"] * 1.75) < 1, "8 nodes: 1.75 x the comm of 2")
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
