#!/usr/bin/env bash
# 'sparkctl doctor -H' across a cluster of namespace nodes with real sshd:
# healthy, an MTU mismatch on one link, a node down, a refused key, twins in
# one subnet, a remote sparkctl that prints garbage.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
cluster_up 2

# The fixture's limits and socket buffers are not a healthy node's: fix them in the trees.
for n in node0 node1; do
  t=$(cluster_tree $n)
  python3 - "$t/.sparkctl/host.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["limits"] = {"memlock_soft": "unlimited", "memlock_hard": "unlimited"}
json.dump(d, open(sys.argv[1], "w"))
PY
  echo 67108864 > "$t/proc/sys/net/core/rmem_max"
  echo 67108864 > "$t/proc/sys/net/core/wmem_max"
done
hosts=$(cluster_hosts)

# Healthy: every check passes, both links ping at MTU 9000, clocks agree.
export TMPDIR=$TMP
expect 0 "$SPARKCTL" doctor -H "$hosts"
lacks "$TMP/out" FAIL
lacks "$TMP/out" WARN
contains "$TMP/out" "PASS  cluster.ssh"
[ "$(grep -c 'PASS  cluster.ping' "$TMP/out")" = 2 ] || fail "expected two passing links"
contains "$TMP/out" "node0 enp1s0f1np1 -> node1 198.19.177.12: 9000-byte packets pass unfragmented"
contains "$TMP/out" "PASS  cluster.clock"
contains "$TMP/out" "PASS  cluster.hca_pairing"
expect 0 "$SPARKCTL" doctor -H "$hosts" --json
json_valid doctor "$TMP/out"
python3 - "$TMP/out" <<'PY' || fail "JSON of a healthy cluster"
import json, sys
d = json.load(open(sys.argv[1]))
assert [n["host"] for n in d["nodes"]] == ["node0", "node1"]
assert all(n["inspected"] and abs(n["clock_offset_seconds"]) < 1 for n in d["nodes"]), d["nodes"]
assert d["summary"]["fail"] == 0 and d["summary"]["uninspected"] == 0
PY
# Nothing outlives the command: no ssh master, no control directory.
sleep 0.2
! pgrep -f "ssh -F $TMP/ssh_config" > /dev/null || fail "an ssh process outlived doctor"
! ls -d "$TMP"/sparkctl-ssh-* 2> /dev/null || fail "an ssh control directory was left behind"

# One end of one link at MTU 1500: the DF ping and the MTU check fail on that link only.
cluster_set_mtu node1 enP2p1s0f1np1 1500
expect 4 "$SPARKCTL" doctor -H "$hosts" --only cluster.ping,cluster.mtu
contains "$TMP/out" "FAIL  cluster.mtu   node0 enP2p1s0f1np1 has MTU 9000 but node1 enP2p1s0f1np1 has 1500"
contains "$TMP/out" "FAIL  cluster.ping  node0 enP2p1s0f1np1 -> node1 198.19.178.12: no reply to a don't-fragment ping of 9000 bytes"
contains "$TMP/out" "PASS  cluster.ping  node0 enp1s0f1np1 -> node1 198.19.177.12"
cluster_set_mtu node1 enP2p1s0f1np1 9000

# Twins in one subnet on node1: fabric.subnets fails there.
cluster_same_subnet node1
expect 4 "$SPARKCTL" doctor -H "$hosts" --only fabric.subnets
contains "$TMP/out" "share a subnet"
[ "$(grep -c 'FAIL  fabric.subnets' "$TMP/out")" = 1 ] || fail "only node1's twins share a subnet"

# A node down: exit 3, the other node still checked.
cluster_node_down node1
expect 3 "$SPARKCTL" doctor -H "$hosts" --only rdma.devices,cluster.ssh
contains "$TMP/out" "node1"
contains "$TMP/out" "not inspected:"
contains "$TMP/out" "Connection refused"
contains "$TMP/out" "PASS  rdma.devices"
contains "$TMP/out" "FAIL  cluster.ssh  node1 could not be inspected"
cluster_node_up node1

# A refused key: exit 3 with ssh's reason.
cluster_refuse_key node1
expect 3 "$SPARKCTL" doctor -H "$hosts" --only cluster.ssh
contains "$TMP/out" "Permission denied"
cluster_accept_key node1

# The remote sparkctl prints garbage instead of JSON: a clear per-node error.
printf '#!/bin/sh\necho "Welcome to node1!"\n' > "$TMP/garbage"
chmod +x "$TMP/garbage"
cluster_remote_sparkctl node1 "$TMP/garbage"
expect 3 "$SPARKCTL" doctor -H "$hosts" --remote-sparkctl sparkctl --only cluster.ssh
contains "$TMP/out" "the remote sparkctl did not print an inventory"
contains "$TMP/out" "Welcome to node1!"
# No sparkctl at all on the node.
cluster_remote_sparkctl node1 -
expect 3 "$SPARKCTL" doctor -H "$hosts" --remote-sparkctl sparkctl --only cluster.ssh
contains "$TMP/out" "not found"

# A node whose inventory names it with terminal controls (a window title, a
# bell, red text) and a netdev that clears the screen; then one whose
# sparkctl fails with controls and ssh's CR LF on stderr: the report shows
# them escaped, in text and in JSON.
cat > "$TMP/hostile" << EOF2
#!/bin/sh
[ "\$1" = topo ] || exec $SPARKCTL "\$@"
$SPARKCTL "\$@" | python3 -c '
import json, sys
d = json.loads(sys.stdin.read().replace("enp1s0f1np1", "dev\x1b[2Jx\u009b"), strict=False)
d["system"]["hostname"] = "\x1b]0;PWNED\x07\x1b[31mRED"
json.dump(d, sys.stdout)'
EOF2
chmod +x "$TMP/hostile"
cluster_remote_sparkctl node1 "$TMP/hostile"
run "$SPARKCTL" doctor -H "$hosts" --remote-sparkctl sparkctl --only net.mtu,rdma.devices
no_controls "$TMP/out" "$TMP/err"
contains "$TMP/out" '\x1b]0;PWNED\x07\x1b[31mRED (node1)'
contains "$TMP/out" 'dev\x1b[2Jx\xc2\x9b'
run "$SPARKCTL" doctor -H "$hosts" --remote-sparkctl sparkctl --only net.mtu --json
no_controls "$TMP/out" "$TMP/err"
json_valid doctor "$TMP/out"
[ "$(json_get "$TMP/out" 'd["nodes"][1]["name"]')" = $'\e]0;PWNED\a\e[31mRED' ] ||
  fail "the JSON does not hold node1's name exactly"
printf '#!/bin/sh\nprintf "no\\033]0;T\\007pe\\r\\n" >&2\nexit 1\n' > "$TMP/failing"
chmod +x "$TMP/failing"
cluster_remote_sparkctl node1 "$TMP/failing"
expect 3 "$SPARKCTL" doctor -H "$hosts" --remote-sparkctl sparkctl --only cluster.ssh
no_controls "$TMP/out" "$TMP/err"
contains "$TMP/out" 'not inspected: no\x1b]0;T\x07pe (exit status 1)'
