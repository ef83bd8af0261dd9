#!/usr/bin/env bash
# sparkctl serve --print across two namespace nodes with real sshd
# (tests/cluster/cluster.sh: the fixture spark-1cable on each, one direct
# fabric link): the inventories read over SSH, each node's fabric address
# in its environment and its engine's flags, the head's address everywhere;
# a node that cannot be reached.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
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
grep -v '^# PASS serve.ports_free ' "$TMP/out" > "$TMP/over-ssh.txt"
expect 0 "$SPARKCTL" serve vllm Qwen/Qwen3-8B --from "$TMP/node0.json" --from "$TMP/node1.json" --params 8B --print
diff -u "$TMP/over-ssh.txt" "$TMP/out" >&2 || fail "the plan over SSH differs from the one of the saved inventories"

expect 0 "$SPARKCTL" serve llamacpp /m.gguf -H "$(cluster_hosts)" --print --json
json_valid serve-print "$TMP/out"
[ "$(json_get "$TMP/out" '" ".join(d["steps"][0]["argv"])')" = "rpc-server --host 198.19.177.12 --port 50052" ] ||
  fail "rpc-server not on node1's fabric address"

# A node that cannot be reached: named, exit 3, nothing printed.
expect 3 "$SPARKCTL" serve vllm m -H node0,sparkctl-standin-node.invalid --print
contains "$TMP/err" "sparkctl-standin-node.invalid: "
[ ! -s "$TMP/out" ] || fail "printed a plan without every node"
