#!/usr/bin/env bash
# One exit-status table for every command (docs/exit-codes.md): 0 OK, 1 ERROR,
# 2 USAGE, 3 UNAVAILABLE (also: a node that could not be reached), 4 PROBLEMS,
# 5 TIMEOUT.  Each command, each status it can give, at least once.
# Elsewhere: bench nccl's 4 and 5 (tests/fake/t0240, stand-in NCCL), bench
# link's 4 (tests/cluster/t0620, stand-in perftest), launch across nodes
# (tests/launch/t0810).
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
F=tests/fixtures
# A name that never resolves (RFC 2606): a node that cannot be reached.
NOWHERE=nosuch.invalid

# A host without RDMA: a fixture tree without its RDMA devices.
cp -a $F/spark-1cable "$TMP/no-rdma"
rm -rf "$TMP/no-rdma/sys/class/infiniband"
expect 0 "$SPARKCTL" topo --root $F/spark-1cable --json
cp "$TMP/out" "$TMP/node.json"
printf '{"schema_version": 1, "sys": ' > "$TMP/bad.json"
touch "$TMP/afile"

# ---- the table itself, as the help points to it ----
for code in 0 1 2 3 4 5; do
  grep -q "^| $code | " docs/exit-codes.md || fail "docs/exit-codes.md lacks status $code"
done

# ---- topo: 0, 1, 2 (a value it cannot read is reported, not a failure) ----
expect 0 "$SPARKCTL" topo --root "$TMP/no-rdma"
expect 1 "$SPARKCTL" topo --root /nonexistent/dir
expect 1 "$SPARKCTL" topo --from "$TMP/bad.json"
expect 2 "$SPARKCTL" topo --bogus

# ---- capture: 0, 1, 2 ----
expect 0 "$SPARKCTL" capture --root $F/spark-1cable "$TMP/capture"
expect 1 "$SPARKCTL" capture --root $F/spark-1cable "$TMP/afile/capture"
expect 2 "$SPARKCTL" capture

# ---- env: 0, 1, 2, 3 (no RDMA), 4 (nodes that would not work together) ----
expect 0 "$SPARKCTL" env --root $F/spark-1cable
expect 1 "$SPARKCTL" env --from "$TMP/bad.json"
expect 1 "$SPARKCTL" env --root $F/spark-gid-drift --pin-gid
expect 2 "$SPARKCTL" env --topology star
expect 3 "$SPARKCTL" env --root "$TMP/no-rdma"
contains "$TMP/err" "has no ACTIVE fabric port"
expect 4 "$SPARKCTL" env --from "$TMP/node.json" --from "$TMP/node.json"
contains "$TMP/err" "both have the address"

# ---- netplan: 0, 1, 2 (also an index out of range), 3 (no RoCE port) ----
expect 0 "$SPARKCTL" netplan --root $F/spark-1cable --plan pair --node 0
expect 1 "$SPARKCTL" netplan --from "$TMP/bad.json" --plan pair --node 0
expect 1 "$SPARKCTL" netplan --root $F/spark-1cable --plan pair --node 0 --base 127.0.0.0/8
expect 2 "$SPARKCTL" netplan --root $F/spark-1cable --plan pair
contains "$TMP/err" "--node is required"
expect 2 "$SPARKCTL" netplan --root $F/spark-1cable --plan pair --node 5
contains "$TMP/err" "--node 5 is out of range"
contains "$TMP/err" "Try 'sparkctl netplan --help'"
expect 2 "$SPARKCTL" netplan --root $F/spark-1cable --plan pair --node 0 --hosts --names a,b,c
expect 3 "$SPARKCTL" netplan --root "$TMP/no-rdma" --plan pair --node 0
contains "$TMP/err" "has no ACTIVE RoCE fabric port"
expect 3 "$SPARKCTL" netplan --root $F/ib-server --plan switch --node 0 --nodes 4

# ---- doctor: 0, 1, 2, 3 (a node not inspected), 4 (a check failed) ----
expect 0 "$SPARKCTL" doctor --root $F/spark-1cable --only rdma.devices
expect 1 "$SPARKCTL" doctor --root /nonexistent/dir
expect 1 "$SPARKCTL" doctor --from "$TMP/node.json" --from "$TMP/bad.json"
contains "$TMP/out" "not inspected"
expect 2 "$SPARKCTL" doctor --only no.such-check
expect 3 "$SPARKCTL" doctor -H "$NOWHERE" --fanout 1
expect 4 "$SPARKCTL" doctor --root $F/spark-1cable
contains "$TMP/out" "FAIL"
expect 4 "$SPARKCTL" doctor --root $F/spark-1cable --json
expect 4 "$SPARKCTL" doctor --root "$TMP/no-rdma"

# ---- launch: the first failed rank's status; its own: 1, 2, 3, 5 ----
expect 0 "$SPARKCTL" launch --no-env -- true
expect 7 "$SPARKCTL" launch --no-env --log-dir "$TMP/logs" -- sh -c 'exit 7'
# summary.json tells a rank's status from the launch's own.
/usr/bin/python3 - "$TMP/logs/summary.json" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "failed" and d["exit_status"] == 7, d
EOF
expect 3 "$SPARKCTL" launch --no-env --log-dir "$TMP/logs3" -- sh -c 'exit 3'
/usr/bin/python3 - "$TMP/logs3/summary.json" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "failed" and d["exit_status"] == 3, d
EOF
expect 1 "$SPARKCTL" launch --no-env --log-dir "$TMP/afile/logs" -- true
contains "$TMP/err" "cannot create the log directory"
expect 2 "$SPARKCTL" launch --bogus -- true
expect 2 "$SPARKCTL" launch --no-env
expect 3 timeout 120 "$SPARKCTL" launch -H "$NOWHERE" --no-env --log-dir "$TMP/logs-nowhere" -- true
contains "$TMP/err" "$NOWHERE"
/usr/bin/python3 - "$TMP/logs-nowhere/summary.json" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "node-failed" and d["exit_status"] == 3, d
EOF
expect 5 timeout 120 "$SPARKCTL" launch --no-env --job-timeout 1 --log-dir "$TMP/logs5" -- sleep 300
contains "$TMP/err" "the job was ended by --job-timeout"
/usr/bin/python3 - "$TMP/logs5/summary.json" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "timeout" and d["exit_status"] == 5, d
EOF

# ---- bench nccl: 2, 3 without a GPU (4 and 5: tests/fake/t0240) ----
expect 2 "$SPARKCTL" bench nccl --bogus
run "$SPARKCTL" bench nccl
if grep -q "no GPU to run on" "$TMP/err"; then
  [ "$status" = 3 ] || fail "bench nccl without a GPU exited $status, expected 3"
else
  note "this host has a GPU: bench nccl's 3 is not checked here"
fi

# ---- bench link: 2, 3 (a node not reached; 4: tests/cluster/t0620) ----
expect 2 "$SPARKCTL" bench link -H "$NOWHERE"
expect 3 timeout 120 "$SPARKCTL" bench link -H "$NOWHERE,other.$NOWHERE"
contains "$TMP/err" "could not be inspected"

# ---- exporter: 0 (--once), 1, 2 ----
expect 0 "$SPARKCTL" exporter --root $F/spark-1cable --once
expect 1 "$SPARKCTL" exporter --root /nonexistent/dir --once
expect 2 "$SPARKCTL" exporter --bogus

# ---- top: 0, 2, 3 (a node not sampled) ----
expect 0 "$SPARKCTL" top --root $F/spark-1cable --once
expect 2 "$SPARKCTL" top --bogus
expect 3 timeout 120 "$SPARKCTL" top -H "$NOWHERE" --once

# ---- status: 0, 2, 3 (a node not reached) ----
expect 0 "$SPARKCTL" status
expect 2 "$SPARKCTL" status --bogus
expect 3 timeout 120 "$SPARKCTL" status -H "$NOWHERE"

# ---- deploy: 0 (this host), 1, 2, 3 (a node not reached; 4: tests/cluster/t0660) ----
expect 0 "$SPARKCTL" deploy -H localhost --to "$TMP/deployed/sparkctl"
cmp "$SPARKCTL" "$TMP/deployed/sparkctl" || fail "deploy to this host"
expect 1 "$SPARKCTL" deploy -H localhost --deb "$TMP/no-such.deb"
expect 2 "$SPARKCTL" deploy
expect 3 timeout 120 "$SPARKCTL" deploy -H "$NOWHERE"

# ---- slurm conf: 0 (this host), 1, 2, 3 (a node not reached) ----
expect 0 "$SPARKCTL" slurm conf -H localhost
expect 1 "$SPARKCTL" slurm conf --from "$TMP/no-such.json"
expect 2 "$SPARKCTL" slurm conf -H localhost --mem-reserve lots
expect 2 "$SPARKCTL" slurm conf -H localhost --controller "$NOWHERE"
expect 3 timeout 120 "$SPARKCTL" slurm conf -H "$NOWHERE"

# ---- help, version, agent: 0, 2 ----
expect 0 "$SPARKCTL" help doctor
expect 2 "$SPARKCTL" help no-such-command
expect 0 "$SPARKCTL" version
expect 2 "$SPARKCTL" version extra
expect 2 "$SPARKCTL" agent ping eth0
expect 2 "$SPARKCTL" agent hold --ready-port 0 -- true

# ---- every --help ends with the statuses that command uses ----
for c in doctor launch status deploy "bench link" "bench nccl" env netplan top exporter topo capture \
  "slurm conf"; do
  # shellcheck disable=SC2086
  expect 0 "$SPARKCTL" $c --help
  contains "$TMP/out" "Exit status:"
done
