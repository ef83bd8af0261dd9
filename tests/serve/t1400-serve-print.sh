#!/usr/bin/env bash
# sparkctl serve --print on two Sparks (the fixtures spark-1cable as spark-01
# and spark-gid-drift as spark-02: one cable, a subnet per twin): the whole
# output of each engine and backend, natively and in docker (golden); the
# export and command lines taken by a shell are the JSON's environment and
# argv exactly; the JSON against its schema; the preflight's failure; what
# is refused, with its exit status.
. "$SRCDIR/tests/lib.sh"

"$SPARKCTL" topo --root "$FIXTURES/spark-1cable" --json > "$TMP/spark-01.json"
"$SPARKCTL" topo --root "$FIXTURES/spark-gid-drift" --json > "$TMP/spark-02.json"
pair=(--from "$TMP/spark-01.json" --from "$TMP/spark-02.json")

# same_as_json TEXT JSON: the text's export lines, run by a shell, set each
# node's environment as the JSON has it; its command lines, split by a
# shell, are the JSON's argv; nodes and steps in the same order.
same_as_json() {
  /usr/bin/python3 - "$1" "$2" << 'PY' || fail "the text of $1 is not the JSON of $2"
import json, shlex, subprocess, sys
text = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
nodes = text.split("\n# ==== ")[1:]
assert len(nodes) == len(d["nodes"]) + 2, "sections"
for part, node in zip(nodes, d["nodes"]):
    assert part.startswith(node["host"] + ": rank %d" % node["rank"]), part[:40]
    exports = "".join(l + "\n" for l in part.splitlines() if l.startswith("export "))
    keys = list(node["environment"])
    script = exports + 'for k in ' + " ".join(keys) + '; do printf "%s=%s\\0" "$k" "$(printenv "$k")"; done'
    out = subprocess.run(["sh", "-c", script], env={}, capture_output=True, check=True).stdout
    got = dict(kv.split("=", 1) for kv in out.decode().split("\0") if kv)
    assert got == node["environment"], (got, node["environment"])
    assert len(exports.splitlines()) == len(keys)
steps = nodes[len(d["nodes"])].splitlines()[1:]
lines = [l for l in steps if l and not l.startswith("#")]
titles = [l for l in steps if l.startswith("# ")]
assert len(lines) == len(d["steps"]), "steps"
for line, title, step in zip(lines, titles, d["steps"]):
    assert shlex.split(line) == step["argv"], (line, step["argv"])
    assert title == "# %d. %s: %s" % (step["order"], step["host"], step["role"]), title
PY
}

# case NAME ARGS...: the plan of the pair, text (golden) and JSON (valid, the same plan).
case_() {
  local name=$1; shift
  expect 0 "$SPARKCTL" serve --print "${pair[@]}" "$@"
  [ ! -s "$TMP/err" ] || fail "$name: said something on stderr"
  golden "serve/$name.txt" "$TMP/out"
  cp "$TMP/out" "$TMP/$name.txt"
  expect 0 "$SPARKCTL" serve --print --json "${pair[@]}" "$@"
  cp "$TMP/out" "$TMP/$name.json"
  json_valid serve-print "$TMP/$name.json"
  same_as_json "$TMP/$name.txt" "$TMP/$name.json"
}

case_ vllm-mp vllm Qwen/Qwen3-8B --params 8B
case_ vllm-ray vllm Qwen/Qwen3-8B --backend ray -- --max-model-len 4096 --enforce-eager
case_ sglang sglang Qwen/Qwen3-8B --model-size 16G
case_ trtllm trtllm nvidia/Llama-3.1-8B-Instruct-FP8 --params 8B --dtype fp8
case_ llamacpp llamacpp /models/Qwen3-8B-Q4_K_M.gguf --model-size 5G
case_ vllm-mp-image vllm Qwen/Qwen3-8B --image nvcr.io/nvidia/vllm:25.11-py3 \
  --model-cache /srv/hf -- --max-model-len 4096
case_ vllm-ray-image vllm Qwen/Qwen3-8B --backend ray --image nvcr.io/nvidia/vllm:25.11-py3
case_ trtllm-image trtllm nvidia/Llama-3.1-8B-Instruct-FP8 --image nvcr.io/nvidia/tensorrt-llm/release:1.1.0
case_ llamacpp-image llamacpp ggml-org/gpt-oss-20b-GGUF --image llama-cpp-rpc:local

# ---- what each line must hold, beyond the golden files
t=$TMP/vllm-mp.txt
# Workers first, headless; the head last with the API; every node at the head's fabric address.
[ "$(grep -c '^vllm serve' "$t")" = 2 ] || fail "not one vllm serve per node"
grep '^vllm serve' "$t" | head -1 | grep -q -- '--node-rank 1 .*--headless$' || fail "the worker is not first, headless"
grep '^vllm serve' "$t" | tail -1 | grep -q -- '--node-rank 0 .*--port 8000$' || fail "the head is not last"
[ "$(grep -c -- '--master-addr 192.168.177.11 --master-port 29501' "$t")" = 2 ] || fail "a node not at HEAD:29501"
# Gloo and TensorPipe: the plain name of the fabric interface, never NCCL's ^ or = forms.
for t in "$TMP"/*.txt; do
  lacks "$t" "GLOO_SOCKET_IFNAME='"
  lacks "$t" "GLOO_SOCKET_IFNAME=^"
  lacks "$t" "enP7s7"  # the management port
done
contains "$TMP/vllm-mp.txt" "export GLOO_SOCKET_IFNAME=enp1s0f1np1"
contains "$TMP/vllm-mp.txt" "export TP_SOCKET_IFNAME=enp1s0f1np1"
contains "$TMP/vllm-mp.txt" "export VLLM_HOST_IP=192.168.177.12"
lacks "$TMP/vllm-mp.txt" "RAY_"
contains "$TMP/vllm-ray.txt" "export RAY_OVERRIDE_NODE_IP_ADDRESS=192.168.177.12"
lacks "$TMP/sglang.txt" "VLLM_HOST_IP"
# llama.cpp's RPC has no authentication: the worker listens on its fabric address only.
contains "$TMP/llamacpp.txt" "rpc-server --host 192.168.177.12 --port 50052"
lacks "$TMP/llamacpp.txt" "rpc-server --host 0.0.0.0"
# docker: host network and IPC, the RDMA devices, memlock, the cache, every variable with -e.
t=$TMP/vllm-mp-image.txt
[ "$(grep -c "^docker run --rm --name sparkctl-serve-vllm --network host --ipc host --gpus all --device /dev/infiniband --ulimit memlock=-1 -v /srv/hf:/root/.cache/huggingface .* --entrypoint vllm nvcr.io/nvidia/vllm:25.11-py3 serve Qwen/Qwen3-8B " "$t")" = 2 ] ||
  fail "not a docker run line per node"
python3 - "$TMP/vllm-mp-image.json" << 'PY' || fail "docker run lacks a variable"
import json, sys
d = json.load(open(sys.argv[1]))
for step in d["steps"]:
    node = next(n for n in d["nodes"] if n["host"] == step["host"])
    argv = step["argv"]
    given = [argv[i + 1] for i, w in enumerate(argv) if w == "-e"]
    assert given == ["%s=%s" % kv for kv in node["environment"].items()], given
PY
contains "$TMP/vllm-ray-image.txt" "docker exec sparkctl-serve-vllm vllm serve Qwen/Qwen3-8B"

# ---- the preflight: a model too large for the pair is printed, said, exit 4
expect 4 "$SPARKCTL" serve vllm Qwen/Qwen3-235B-A22B --params 235B "${pair[@]}" --print
contains "$TMP/out" "# FAIL serve.memory spark-01: its share of the weights, 218.9 GiB, with a 20% margin 262.6 GiB, does not fit its MemAvailable (unified memory) of 116.0 GiB"
contains "$TMP/out" "vllm serve Qwen/Qwen3-235B-A22B"
contains "$TMP/err" "sparkctl serve: preflight: serve.memory spark-02: its share"
expect 4 "$SPARKCTL" serve vllm Qwen/Qwen3-235B-A22B --params 235B "${pair[@]}" --print --json
json_valid serve-print "$TMP/out"
[ "$(json_get "$TMP/out" 'd["preflight"][1]["status"]')" = FAIL ] || fail "JSON: no FAIL"
# fp4 weights fit.
expect 0 "$SPARKCTL" serve vllm Qwen/Qwen3-235B-A22B --params 235B --dtype fp4 "${pair[@]}" --print

# ---- one node: --root
expect 0 "$SPARKCTL" serve vllm m --print --root "$FIXTURES/spark-1cable"
contains "$TMP/out" "vllm serve m --tensor-parallel-size 1 --pipeline-parallel-size 1 --distributed-executor-backend mp --nnodes 1 --node-rank 0 --master-addr 192.168.177.11 --master-port 29501 --port 8000"

# ---- refused: one line (and the pointer to --help), exit 2, nothing printed
bad() {
  expect 2 "$SPARKCTL" serve "$@"
  contains "$TMP/err" "$msg"
  [ "$(grep -vc "^Try 'sparkctl serve --help'.$" "$TMP/err")" = 1 ] || fail "not one line: $*"
  [ ! -s "$TMP/out" ] || fail "printed a plan: $*"
}
msg="unknown engine 'exo' (vllm, sglang, trtllm, llamacpp)" bad exo m --print "${pair[@]}"
msg="--backend is vllm's; sglang has none" bad sglang m --backend mp --print "${pair[@]}"
msg="unknown backend 'mpi' (mp, ray)" bad vllm m --backend mpi --print "${pair[@]}"
msg="tensor parallel 2 x pipeline parallel 2 is 4 GPUs; the 2 nodes have 2" bad vllm m --tp 2 --pp 2 --print "${pair[@]}"
msg="--pp 3 does not divide the 2 GPUs of the 2 nodes" bad vllm m --pp 3 --print "${pair[@]}"
msg="--tp and --pp are at least 1" bad vllm m --tp 0 --print "${pair[@]}"
msg="llamacpp splits layers over its RPC servers: no --tp or --pp" bad llamacpp m.gguf --tp 1 --print "${pair[@]}"
msg="70000 is not a TCP port" bad vllm m --port 70000 --print "${pair[@]}"
msg="0 is not a TCP port" bad vllm m --master-port 0 --print "${pair[@]}"
msg="the API and the rendezvous would both use port 8000" bad vllm m --master-port 8000 --print "${pair[@]}"
msg="--nnodes is set by sparkctl serve (from the nodes)" bad vllm m --print "${pair[@]}" -- --nnodes=3
msg="--dist-init-addr is set by sparkctl serve" bad sglang m --print "${pair[@]}" -- --dist-init-addr x:1
msg="unexpected argument 'extra'" bad vllm m extra --print "${pair[@]}"
msg="give the ENGINE and the MODEL" bad vllm --print "${pair[@]}"
msg="--from and --root name no node to start on: give --print, or -H" bad vllm m "${pair[@]}"
msg="--from and --root name no node to start on: give --print, or -H" bad sglang m --root "$FIXTURES/spark-1cable"
msg="--json is for --print" bad trtllm m --json -H a,b # trtllm starts: refused only as any engine is
msg="--json is for --print" bad vllm m --json -H a,b
msg="--params '8G': a count such as 8B, 70B, 500M" bad vllm m --params 8G --print "${pair[@]}"
msg="--model-size or --params, not both" bad vllm m --params 8B --model-size 16G --print "${pair[@]}"
msg="--dtype 'int4': bf16, fp16, fp8 or fp4" bad vllm m --params 8B --dtype int4 --print "${pair[@]}"
msg="--model-cache only applies with --image" bad vllm m --model-cache /srv/hf --print "${pair[@]}"
msg="--model-cache takes an absolute path" bad vllm m --image i --model-cache hf --print "${pair[@]}"
msg="-H, --hostfile or --cluster, or --from: not both" bad vllm m -H a,b --print "${pair[@]}"
msg="--root is one node: not with --from, -H, --hostfile or --cluster" bad vllm m -H a --root "$FIXTURES/spark-1cable" --print
msg="the model is an empty or unprintable word" bad vllm $'Qwen\n# x' --print "${pair[@]}"
msg="an engine argument is not printable" bad vllm m --print "${pair[@]}" -- $'--x=\e[31m'

# ---- nodes that cannot serve together: named, exit 1
"$SPARKCTL" topo --root "$FIXTURES/spark-2cable" --json |
  python3 -c 'import json, sys
d = json.load(sys.stdin); d["system"]["hostname"] = "spark-03"; json.dump(d, sys.stdout)' > "$TMP/spark-03.json"
expect 1 "$SPARKCTL" serve vllm m --print --from "$TMP/spark-01.json" --from "$TMP/spark-03.json"
contains "$TMP/err" "spark-03: its fabric address 192.168.100.11 (enp1s0f0np0) is not on the head's subnet (192.168.177.11, spark-01)"
"$SPARKCTL" topo --root "$FIXTURES/ib-server" --json > "$TMP/ib.json"
expect 1 "$SPARKCTL" serve vllm m --print --tp 8 --from "$TMP/ib.json" --from "$TMP/ib.json"
contains "$TMP/err" "its bootstrap interface eno1 is not a fabric port (the management network)"
[ ! -s "$TMP/out" ] || fail "printed a plan for nodes that cannot serve"

# ---- a node without an ACTIVE fabric port: named, exit 3
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for dev in d["rdma_devices"]:
    for port in dev["ports"]:
        port["state"], port["state_code"] = "DOWN", 1
json.dump(d, open(sys.argv[2], "w"))' "$TMP/spark-02.json" "$TMP/down.json"
expect 3 "$SPARKCTL" serve vllm m --print --from "$TMP/spark-01.json" --from "$TMP/down.json"
contains "$TMP/err" "sparkctl serve: spark-02 has no ACTIVE fabric port"
[ ! -s "$TMP/out" ] || fail "printed a plan without a fabric"

# ---- a node that cannot be reached is named, exit 3
cat > "$TMP/ssh" << 'EOF2'
#!/bin/sh
case "$1" in -G | -O*) exit 1 ;; esac
echo "ssh: connect to host spark-09 port 22: Connection refused" >&2
exit 255
EOF2
chmod +x "$TMP/ssh"
SPARKCTL_SSH=$TMP/ssh expect 3 "$SPARKCTL" serve vllm m --print -H sparkctl-standin-node.invalid
contains "$TMP/err" "sparkctl-standin-node.invalid: ssh: connect to host spark-09 port 22: Connection refused"
[ ! -s "$TMP/out" ] || fail "printed a plan without every node"

# The start order's waits are the nodes' scripts' (agent serve-gate), not serve's options.
"$SPARKCTL" serve --help > "$TMP/help"
lacks "$TMP/help" "await"
lacks "$TMP/help" "report-to"
expect 2 "$SPARKCTL" serve vllm m -H a,b --report-to 198.18.0.1:29501:1
contains "$TMP/err" "unknown option '--report-to'"
expect 2 "$SPARKCTL" agent serve-gate
contains "$TMP/err" "sparkctl agent serve-gate: --await-workers, --await-peers, --await-listening or --report-to"
expect 2 "$SPARKCTL" agent serve-gate --report-to nohost:1:1
contains "$TMP/err" "'nohost:1:1': ADDR:PORT:N, ADDR an IPv4 address"
