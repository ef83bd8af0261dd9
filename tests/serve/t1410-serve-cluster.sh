#!/usr/bin/env bash
# sparkctl serve --print across two namespace nodes with real sshd
# (tests/cluster/cluster.sh: the fixture spark-1cable on each, one direct
# fabric link): the inventories read over SSH, each node's fabric address
# in its environment and its engine's flags, the head's address everywhere;
# every node's own NCCL against the head's (serve.nccl: version and build
# id from each node's inventory); a node that cannot be reached.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
. "$SRCDIR/tests/serve/lib-serve.sh"
cluster_require
cluster_up 2
export TMPDIR=$TMP

expect 0 "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$(cluster_hosts)" --params 8B --print
[ ! -s "$TMP/err" ] || fail "said something on stderr"
contains "$TMP/out" "# the head: node0, 198.19.177.11 on enp1s0f1np1; the API: http://198.19.177.11:8000"
contains "$TMP/out" "# ==== node1: rank 1, 198.19.177.12 on enp1s0f1np1 ===="
contains "$TMP/out" "export VLLM_HOST_IP=198.19.177.12"
contains "$TMP/out" "export GLOO_SOCKET_IFNAME=enp1s0f1np1"
contains "$TMP/out" "# 1. node1: vllm worker"
contains "$TMP/out" "vllm serve Qwen/Qwen3-8B --tensor-parallel-size 1 --pipeline-parallel-size 2 --distributed-executor-backend mp --nnodes 2 --node-rank 1 --master-addr 198.19.177.11 --master-port 29501 --headless"
contains "$TMP/out" "# 2. node0: vllm head"
contains "$TMP/out" "# PASS serve.memory node1: its share of the weights, 7.5 GiB"

# Over ssh the nodes themselves are asked too: the head's ports are free.
contains "$TMP/out" "# PASS serve.ports_free node0: ports 8000, 29501 free on node0"

# The same nodes from their saved inventories give the same plan, but for
# the checks that only the nodes themselves can answer.
for n in node0 node1; do
  "$SPARKCTL_SSH" "$n" -- sparkctl topo --json > "$TMP/$n.json" || fail "topo on $n"
done
# (the findings of serve.ports_free and serve.nccl, with their fixes, left out)
awk '/^# [A-Z]+ serve\.(ports_free|nccl)[ :]/ { skip = 1; next } skip && /^#   / { next } { skip = 0; print }' \
  "$TMP/out" > "$TMP/over-ssh.txt"
expect 0 "$SPARKCTL" serve vllm Qwen/Qwen3-8B --from "$TMP/node0.json" --from "$TMP/node1.json" --params 8B --print
diff -u "$TMP/over-ssh.txt" "$TMP/out" >&2 || fail "the plan over SSH differs from the one of the saved inventories"

# serve.nccl without --image: each node's NCCL (its inventory: nccl.version,
# nccl.build_id) against the head's.
serve_print() { expect "$1" "$SPARKCTL" serve vllm Qwen/Qwen3-8B -H "$(cluster_hosts)" --params 8B --print; }
contains "$TMP/over-ssh.txt" "# PASS serve.memory" # the saved inventories know no build ids
set_nccl node0 2.28.9 4e43434c2d6275696c642d61
set_nccl node1 2.28.9 4e43434c2d6275696c642d61
serve_print 0
contains "$TMP/out" "# PASS serve.nccl: NCCL 2.28.9 build 4e43434c2d6275696c642d61 (/usr/lib/aarch64-linux-gnu/libnccl.so.2) on every node"
set_nccl node1 2.28.9 4e43434c2d6275696c642d62
serve_print 4
contains "$TMP/out" "# FAIL serve.nccl node1: node1 has NCCL 2.28.9 build 4e43434c2d6275696c642d62 (/usr/lib/aarch64-linux-gnu/libnccl.so.2), but the head node0 has NCCL 2.28.9 build 4e43434c2d6275696c642d61 (/usr/lib/aarch64-linux-gnu/libnccl.so.2): two builds of one version, which have hung jobs"
contains "$TMP/out" "#   fix: install one NCCL build on every node: the head's /usr/lib/aarch64-linux-gnu/libnccl.so.2 on node1 in place of /usr/lib/aarch64-linux-gnu/libnccl.so.2 (or serve in one --image on every node)"
contains "$TMP/err" "sparkctl serve: preflight: serve.nccl node1: node1 has NCCL 2.28.9 build"
lacks "$TMP/out" "PASS serve.nccl"
set_nccl node1 2.27.7 4e43434c2d6275696c642d61
serve_print 4
contains "$TMP/out" "# FAIL serve.nccl node1: node1 has NCCL 2.27.7 build 4e43434c2d6275696c642d61 (/usr/lib/aarch64-linux-gnu/libnccl.so.2), but the head node0 has NCCL 2.28.9 build"
set_nccl node1 2.28.9 ""
serve_print 0
contains "$TMP/out" "# WARN serve.nccl node1: node1 has NCCL 2.28.9 (/usr/lib/aarch64-linux-gnu/libnccl.so.2), the head node0 has NCCL 2.28.9 build 4e43434c2d6275696c642d61 (/usr/lib/aarch64-linux-gnu/libnccl.so.2): one version, but whether one build is not known without both build ids"

expect 0 "$SPARKCTL" serve llamacpp /m.gguf -H "$(cluster_hosts)" --print --json
json_valid serve-print "$TMP/out"
[ "$(json_get "$TMP/out" '" ".join(d["steps"][0]["argv"])')" = "rpc-server --host 198.19.177.12 --port 50052" ] ||
  fail "rpc-server not on node1's fabric address"

# A node that cannot be reached: named, exit 3, nothing printed.
expect 3 "$SPARKCTL" serve vllm m -H node0,sparkctl-standin-node.invalid --print
contains "$TMP/err" "sparkctl-standin-node.invalid: "
[ ! -s "$TMP/out" ] || fail "printed a plan without every node"
