#!/usr/bin/env bash
# 'sparkctl status' across two namespace nodes with real sshd: node0 an
# 8-GPU machine and node1 a GB10 (the stand-in NVML behind a wrapper on each
# node's PATH), their fabric ports from the nodes' trees, the last doctor
# run kept on a node; an unreachable node; --json; this node alone.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
FAKE_LIBDIR=${1:?usage: t0630-status.sh FAKE_LIBDIR}
cluster_require
cluster_up 2
export TMPDIR=$TMP

# Each node's sparkctl sees its own stand-in GPUs.
for spec in node0:h100x8 node1:gb10; do
  node=${spec%%:*} profile=${spec#*:}
  cat > "$TMP/sparkctl-$node" << EOF2
#!/bin/sh
LD_LIBRARY_PATH=$FAKE_LIBDIR SPARKCTL_FAKE_GPU=$profile exec $SPARKCTL "\$@"
EOF2
  chmod +x "$TMP/sparkctl-$node"
  cluster_remote_sparkctl $node "$TMP/sparkctl-$node"
done

# No doctor yet: both nodes answer.
expect 0 "$SPARKCTL" status -H node0,node1 --remote-sparkctl sparkctl
grep -E "^node0 +up +8 x H100 80GB HBM3 +47 C +54% +2428 W +2 up, 200G, MTU 9000 +never run$" "$TMP/out" > /dev/null || fail "node0's row"
grep -E "^node1 +up +GB10 +45 C +37% +11 W +2 up, 200G, MTU 9000 +never run$" "$TMP/out" > /dev/null || fail "node1's row"

# A doctor run on node1 is kept there and shown with its age.
run "$SPARKCTL_SSH" node1 -- sparkctl doctor
[ -f "$CLUSTER_DIR/node1/state/doctor-last.json" ] || fail "doctor kept no report on node1"
fails=$(json_get "$CLUSTER_DIR/node1/state/doctor-last.json" 'd["summary"]["fail"]')
warns=$(json_get "$CLUSTER_DIR/node1/state/doctor-last.json" 'd["summary"]["warn"]')
expect 0 "$SPARKCTL" status -H node0,node1 --remote-sparkctl sparkctl
grep -E "^node1 .* $fails fail, $warns warn \([0-9]+s ago\)$" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node1's doctor"; }
grep -E "^node0 .* never run$" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node0's doctor"; }

# --json: every node's answer.
expect 0 "$SPARKCTL" status -H node0,node1 --remote-sparkctl sparkctl --json
json_valid status "$TMP/out"
py "$TMP/out" '
a, b = d["nodes"]
want((a["host"], a["reachable"], a["error"]), ("node0", True, None), "node0")
s = a["status"]
want(s["hostname"], "node0", "hostname")
want(len(s["gpus"]), 8, "gpus")
want([g["temperature_celsius"] for g in s["gpus"]], [40.0 + i for i in range(8)], "temperatures")
want(s["gpus"][0]["unified_memory"], False, "h100 memory")
want(b["status"]["gpus"][0]["unified_memory"], True, "gb10 memory")
want(b["status"]["gpus"][0]["memory_total_bytes"], None, "gb10 framebuffer")
ports = [p for p in s["ports"] if p["fabric"]]
want([(p["rdma_device"], p["netdev"], p["state"], p["rate_gbps"], p["mtu"]) for p in ports],
     [("roceP2p1s0f1", "enP2p1s0f1np1", "ACTIVE", 200.0, 9000),
      ("rocep1s0f1", "enp1s0f1np1", "ACTIVE", 200.0, 9000)], "fabric ports")
want(b["status"]["doctor"]["summary"]["nodes"], 1, "node1 doctor")
want(s["doctor"], None, "node0 doctor")
'

# A node that cannot be reached: its row says so, the status is 3.
expect 3 "$SPARKCTL" status -H node0,nosuchnode --remote-sparkctl sparkctl
grep -E "^nosuchnode +down" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "no down row"; }
contains "$TMP/out" "nosuchnode: unreachable: ssh: Could not resolve hostname nosuchnode"
# In colour, that line is red as doctor's FAIL is (view/color.h).
expect 3 "$SPARKCTL" status --color always -H node0,nosuchnode --remote-sparkctl sparkctl
grep -qF "$(printf '\033[1;31mnosuchnode: unreachable: ')" "$TMP/out" ||
  { cat -v "$TMP/out"; fail "the unreachable node's line is not red"; }

# A node that names its GPU with terminal controls, and one whose sparkctl
# fails with them (and ssh's CR LF) on stderr: the rows and the lines under
# the table show them escaped; the JSON has them exactly, as \u escapes.
cat > "$TMP/sparkctl-hostile" << EOF2
#!/bin/sh
"$TMP/sparkctl-node1" "\$@" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["gpus"][0]["name"] = "GB10\x1b[2J\u009b"
d["gpu_error"] = "NVML\x07\u0085"
json.dump(d, sys.stdout)'
EOF2
printf '#!/bin/sh\nprintf "no\\033]0;T\\007pe\\r\\n" >&2\nexit 1\n' > "$TMP/sparkctl-failing"
chmod +x "$TMP/sparkctl-hostile" "$TMP/sparkctl-failing"
cluster_remote_sparkctl node0 "$TMP/sparkctl-failing"
cluster_remote_sparkctl node1 "$TMP/sparkctl-hostile"
expect 3 "$SPARKCTL" status -H node0,node1 --remote-sparkctl sparkctl
no_controls "$TMP/out" "$TMP/err"
grep -E '^node1 +up +GB10\\x1b\[2J\\xc2\\x9b ' "$TMP/out" > /dev/null || fail "node1's GPU"
contains "$TMP/out" 'node0: unreachable: no\x1b]0;T\x07pe (exit status 1)'
contains "$TMP/out" 'node1: no GPU figures: NVML\x07\xc2\x85'
expect 3 "$SPARKCTL" status -H node0,node1 --remote-sparkctl sparkctl --json
no_controls "$TMP/out" "$TMP/err"
json_valid status "$TMP/out"
contains "$TMP/out" '"name": "GB10\u001B[2J\u009B"'

# This node alone, and usage errors.
expect 0 "$SPARKCTL" status
grep -E "^localhost +up " "$TMP/out" > /dev/null || fail "no row for this node"
expect 2 "$SPARKCTL" status -H node0 --hostfile /dev/null
expect 2 "$SPARKCTL" status extra
expect 2 "$SPARKCTL" status --fanout 0
! ls -d "$TMP"/sparkctl-ssh-* 2> /dev/null || fail "an ssh control directory was left behind"
