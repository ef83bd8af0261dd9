#!/usr/bin/env bash
# 'sparkctl top -H' across two namespace nodes with real sshd: one block per
# node from each node's own tree (SPARKCTL_ROOT), sampled by 'sparkctl agent
# status' over ssh; a port whose counter moves on one node shows a
# rate there only; a node that cannot be reached shows as unreachable in its
# block and in the exit status.  No ssh process is left behind.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
cluster_up 2
export TMPDIR=$TMP

# node1's rail-0 port sends: its counter moves while top samples.
P=$(cluster_tree node1)/sys/class/infiniband/rocep1s0f1/ports/1/counters
(
  data=$(cat "$P/port_xmit_data")
  while :; do
    data=$((data + 250000000))
    echo "$data" > "$TMP/data.new"
    mv "$TMP/data.new" "$P/port_xmit_data"
    sleep 0.05
  done
) &
WRITER=$!
at_exit "kill $WRITER 2> /dev/null; wait $WRITER 2> /dev/null"

expect 0 "$SPARKCTL" top --once -H node0,node1 --interval 1
[ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "top wrote to stderr"; }
cp "$TMP/out" "$TMP/both"
contains "$TMP/both" "sparkctl top  2 nodes  every 1.0 s  sort name"
# each node's block: its title, no NVML there, its four RDMA ports
for n in node0 node1; do
  sed -n "/^\[$n\]/,/^\$/p" "$TMP/both" > "$TMP/$n"
  grep -q "^\[$n\]  memory [0-9.]*/122.4 GiB used" "$TMP/$n" || { cat "$TMP/both" >&2; fail "no block of $n"; }
  contains "$TMP/$n" "GPU  none: NVML is not available"
  [ "$(grep -c '^roce' "$TMP/$n")" = 4 ] || { cat "$TMP/both" >&2; fail "not four ports on $n"; }
  contains "$TMP/$n" "roceP2p1s0f1/1 enP2p1s0f1np1 ACTIVE    0.00    0.00"
done
contains "$TMP/node0" "rocep1s0f1/1   enp1s0f1np1   ACTIVE    0.00    0.00"
grep -qE '^rocep1s0f1/1   enp1s0f1np1   ACTIVE +[0-9.]*[1-9][0-9.]*    0\.00' "$TMP/node1" ||
  { cat "$TMP/both" >&2; fail "node1's moving counter shows no rate"; }

# --json: valid against the schema; node1's port sends, node0's does not.
expect 0 "$SPARKCTL" top --once --json -H node0,node1 --interval 0.5
/usr/bin/python3 - "$SRCDIR/docs/schemas/top.schema.json" "$TMP/out" << 'EOF2' || { cat "$TMP/out" >&2; fail "--json -H: wrong"; }
import json, sys, jsonschema
d = json.load(open(sys.argv[2]))
jsonschema.validate(d, json.load(open(sys.argv[1])), cls=jsonschema.Draft7Validator)
tx = {n["host"]: [p["tx_gbps"] for p in n["ports"] if p["name"] == "rocep1s0f1/1"] for n in d["nodes"]}
assert tx["node0"] == [0.0] and tx["node1"][0] > 0, tx
EOF2

# --no-gpu reaches the nodes' samplers: no GPU line at all.
expect 0 "$SPARKCTL" top --once -H node0,node1 --interval 0.2 --no-gpu
lacks "$TMP/out" "GPU"

# A node down: its block says so, the other is shown, the exit status is 3.
cluster_node_down node1
expect 3 "$SPARKCTL" top --once -H node0,node1 --interval 0.2
grep -q '^\[node1\]  unreachable: .*(exit status 255)$' "$TMP/out" || { cat "$TMP/out" >&2; fail "node1 is not unreachable"; }
grep -q '^\[node0\]  memory ' "$TMP/out" || { cat "$TMP/out" >&2; fail "node0 is not shown"; }
# A remote sparkctl that is not there: said in the block.
cluster_node_up node1
expect 3 "$SPARKCTL" top --once -H node0,node1 --interval 0.2 --remote-sparkctl /nonexistent/sparkctl
grep -q '^\[node0\]  unreachable: .*(exit status 127)$' "$TMP/out" || { cat "$TMP/out" >&2; fail "a missing remote sparkctl is not said"; }

# Nothing left: no ssh master or session of this cluster's.
sleep 0.2
! pgrep -f -- "$TMP/" | grep -vx "$WRITER" | xargs -r ps -o pid=,args= -p | grep -w ssh ||
  fail "ssh processes left behind"
