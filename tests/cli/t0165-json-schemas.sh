#!/usr/bin/env bash
# Every JSON output that can be made here conforms to its schema in docs/schemas
# (docs/json.md): topo, doctor, doctor --list, env, agent status, status, deploy,
# agent ping, bench nccl (on the stand-in libraries) and launch's summary.json.
# bench link's is validated in tests/cluster/t0620-bench-link.sh, which makes it;
# bench ddp's here on one node (with Debian's python3-torch), and across
# namespace nodes in tests/launch/t1200-bench-ddp.sh.
# A document that drifts - a renamed key, a percent for a ratio, a size that is
# not an integer, a missing schema_version - is refused.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"

cd "$SRCDIR"
/usr/bin/python3 -c 'import jsonschema' 2> /dev/null || fail "no python3-jsonschema (scripts/setup installs it)"
fixtures="spark-1cable spark-2cable spark-ring spark-ofed spark-gid-drift ib-server"

# Every schema is itself a valid JSON Schema, has a schema_version and refuses unknown top-level keys.
for s in docs/schemas/*.schema.json; do
  /usr/bin/python3 - "$s" << 'PY' || fail "$s"
import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
jsonschema.validators.validator_for(s).check_schema(s)
top = s if "properties" in s else s["$defs"]["node"]
assert top["properties"]["schema_version"]["const"] >= 1, "schema_version"
assert top["additionalProperties"] is False, "additionalProperties"
PY
done
for name in inventory doctor doctor-list status deploy agent-status agent-ping env bench-nccl bench-link bench-ddp launch-summary top discover cluster cluster-path storage storage-plan storage-bench storage-connect serve-print; do
  [ -f "docs/schemas/$name.schema.json" ] || fail "no docs/schemas/$name.schema.json"
done

# ---- storage connect, on the stand-in nvme of t1021 (tests/cli/nvme-standin.py)
export NVME_STANDIN_DIR=$TMP/nvme
mkdir -p "$NVME_STANDIN_DIR" "$TMP/nvme-bin"
ln -s "$SRCDIR/tests/cli/nvme-standin.py" "$TMP/nvme-bin/nvme"
printf '#!/bin/sh\n' > "$TMP/nvme-bin/modprobe"
chmod +x "$TMP/nvme-bin/modprobe"
PATH="$TMP/nvme-bin:$PATH" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn nqn.2026-11.io.sparkctl:shared --json > "$TMP/storage-connect.json"
json_valid storage-connect "$TMP/storage-connect.json"

# ---- bench ddp on this node alone (the worker from the source tree)
if /usr/bin/python3 -c 'import torch.distributed' 2> /dev/null; then
  expect 0 env SPARKCTL_DATA_DIR="$SRCDIR/share" SPARKCTL_PYTHON=/usr/bin/python3 timeout 120 \
    "$SPARKCTL" bench ddp -H localhost --params 50k --batch 8 --steps 3 --warmup 1 --json
  cp "$TMP/out" "$TMP/bench-ddp.json"
  json_valid bench-ddp "$TMP/bench-ddp.json"
fi

# ---- topo: the inventory, from trees, from the live host, from a version 1 inventory
for f in $fixtures; do
  "$SPARKCTL" topo --root "tests/fixtures/$f" --json > "$TMP/topo-$f.json"
done
"$SPARKCTL" topo --json > "$TMP/topo-live.json"
"$SPARKCTL" topo --from tests/cli/inventory-v1/spark-1cable.json --json > "$TMP/topo-v1.json"
json_valid inventory "$TMP"/topo-*.json

# ---- serve --print on two Sparks (tests/serve/t1400 validates every engine's)
"$SPARKCTL" serve vllm m --print --json --params 8B --from "$TMP/topo-spark-1cable.json" \
  --from "$TMP/topo-spark-gid-drift.json" > "$TMP/serve-print.json"
json_valid serve-print "$TMP/serve-print.json"

# ---- doctor, on every fixture and here; the list of checks
for f in $fixtures; do
  "$SPARKCTL" doctor --root "tests/fixtures/$f" --json > "$TMP/doctor-$f.json" || true
done
"$SPARKCTL" doctor --json > "$TMP/doctor-live.json" || true
# storage check is doctor's report of the storage checks: the same schema.
tests/fixtures/storage-tree.sh tests/fixtures/spark-1cable "$TMP/storage-tree" spark-01 rw
"$SPARKCTL" storage check --root "$TMP/storage-tree" --json > "$TMP/doctor-storage-check.json" || true
"$SPARKCTL" doctor --root "$TMP/storage-tree" --json > "$TMP/doctor-storage-tree.json" || true
"$SPARKCTL" topo --root "$TMP/storage-tree" --json > "$TMP/inventory-storage-tree.json"
json_valid inventory "$TMP/inventory-storage-tree.json"
json_valid doctor "$TMP"/doctor-*.json
expect 0 "$SPARKCTL" doctor --list --json
cp "$TMP/out" "$TMP/checks.json"
json_valid doctor-list "$TMP/checks.json"
[ "$(json_get "$TMP/checks.json" 'len(d["checks"])')" -gt 10 ] || fail "doctor --list --json lists too few checks"

# ---- env: one node (with and without --explain), several nodes
for f in spark-1cable spark-ofed spark-gid-drift ib-server; do
  expect 0 "$SPARKCTL" env --root "tests/fixtures/$f" --format json
  cp "$TMP/out" "$TMP/env-$f.json"
  expect 0 "$SPARKCTL" env --root "tests/fixtures/$f" --format json --explain
  cp "$TMP/out" "$TMP/env-$f-explain.json"
done
# The peer of spark-1cable: the same port cabled, .12 addresses.
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["system"]["hostname"] = "spark-02"
for n in d["netdevs"]:
    for a in n["ipv4"]:
        if a["address"].startswith("192.168."):
            a["address"] = a["address"].rsplit(".", 1)[0] + ".12"
json.dump(d, open(sys.argv[2], "w"))' "$TMP/topo-spark-1cable.json" "$TMP/peer.json"
expect 0 "$SPARKCTL" env --from "$TMP/topo-spark-1cable.json" --from "$TMP/peer.json" --format json
cp "$TMP/out" "$TMP/env-two.json"
json_valid env "$TMP"/env-*.json

# ---- agent status and status: no GPU library, a GB10, eight H100s; a node that cannot be reached
expect 0 "$SPARKCTL" agent status
cp "$TMP/out" "$TMP/agent-none.json"
for gpu in gb10 h100x8; do
  expect 0 fake $gpu "$SPARKCTL" agent status
  cp "$TMP/out" "$TMP/agent-$gpu.json"
  expect 0 fake $gpu "$SPARKCTL" status --json
  cp "$TMP/out" "$TMP/status-$gpu.json"
done
json_valid agent-status "$TMP"/agent-*.json
[ "$(json_get "$TMP/agent-gb10.json" 'd["gpus"][0]["utilization_ratio"]')" = 0.37 ] || fail "GB10 utilization_ratio"
expect 3 "$SPARKCTL" status -H nosuch.invalid --json
cp "$TMP/out" "$TMP/status-unreachable.json"
# A node shown from what a capture or a saved inventory holds.
expect 0 "$SPARKCTL" status --root tests/fixtures/spark-2cable --json
cp "$TMP/out" "$TMP/status-root.json"
expect 0 "$SPARKCTL" status --from tests/golden/topo-ib-server.json --json
cp "$TMP/out" "$TMP/status-from.json"
json_valid status "$TMP"/status-*.json

# ---- deploy: to this host, and to a node not reached (another architecture: tests/cluster/t0660)
expect 0 "$SPARKCTL" deploy -H localhost --to "$TMP/deployed/sparkctl" --json
cp "$TMP/out" "$TMP/deploy-local.json"
expect 3 "$SPARKCTL" deploy -H nosuch.invalid --json
cp "$TMP/out" "$TMP/deploy-unreachable.json"
json_valid deploy "$TMP"/deploy-*.json
[ "$(json_get "$TMP/deploy-unreachable.json" 'd["nodes"][0]["result"]')" = unreachable ] || fail "deploy's unreachable node"

# ---- agent ping
expect 0 "$SPARKCTL" agent ping lo 127.0.0.1 56
json_valid agent-ping "$TMP/out"

# ---- bench nccl: every collective; fixed steps and the adaptive mode; wrong results
expect 0 fake gb10 "$SPARKCTL" bench nccl --op all -b 64 -e 16K -f 4 -o "$TMP/nccl-all.json"
expect 0 fake gb10 "$SPARKCTL" bench nccl -b 1K -e 4K -i 1K -C 1 -o "$TMP/nccl-step.json"
expect 0 fake gb10 "$SPARKCTL" bench nccl -b 1K -e 2K --precision 5% -o "$TMP/nccl-precision.json"
expect 4 fake gb10 env SPARKCTL_FAKE_NCCL_CORRUPT=1024 "$SPARKCTL" bench nccl -b 256 -e 4K -o "$TMP/nccl-bad.json"
json_valid bench-nccl "$TMP"/nccl-*.json
[ "$(json_get "$TMP/nccl-precision.json" 'd["config"]["precision_ratio"]')" = 0.05 ] || fail "precision_ratio"

# ---- launch's summary.json: a job that ends well and one whose rank fails
"$SPARKCTL" launch --no-env -N 2 --log-dir "$TMP/job-ok" -- true 2> /dev/null || fail "launch true"
"$SPARKCTL" launch --no-env -N 2 --log-dir "$TMP/job-bad" -- sh -c 'exit 3' 2> /dev/null && fail "launch of a failing job exited 0"
json_valid launch-summary "$TMP/job-ok/summary.json" "$TMP/job-bad/summary.json"

# ---- the cluster file, as sparkctl cluster writes and shows it
"$SPARKCTL" cluster add --cluster "$TMP/cluster.json" spark1 --mgmt 10.0.0.1 \
  --fabric 192.168.100.1,192.168.101.1 --user ops --plan pair
"$SPARKCTL" cluster add --cluster "$TMP/cluster.json" spark2 --id 0123456789abcdef0123456789abcdef
"$SPARKCTL" cluster show --cluster "$TMP/cluster.json" --json > "$TMP/cluster-show.json"
json_valid cluster "$TMP/cluster.json" "$TMP/cluster-show.json"
"$SPARKCTL" cluster path --cluster "$TMP/cluster.json" --json > "$TMP/cluster-path.json"
SPARKCTL_CLUSTER=none "$SPARKCTL" cluster path --json > "$TMP/cluster-path-none.json"
json_valid cluster-path "$TMP/cluster-path.json" "$TMP/cluster-path-none.json"

# ---- storage plan: every node's files, and what --write installs (the plan in storage.d too)
mkdir -p "$TMP/storage-root"
splan="--target [fd00::1]:4421 --nqn nqn.2026-01.org.example:shared --mount /mnt/shared --nodes spark1,spark2"
# shellcheck disable=SC2086
"$SPARKCTL" storage plan $splan --json > "$TMP/storage-plan.json"
# shellcheck disable=SC2086
"$SPARKCTL" storage plan $splan --ro-all --fs xfs --iface enp1s0f1np1 --json > "$TMP/storage-plan-ro.json"
# shellcheck disable=SC2086
"$SPARKCTL" storage plan $splan --uuid 0b6e4a52-4f0c-4c4e-9d5e-1f2a3b4c5d6e --node spark2 \
  --write --root "$TMP/storage-root" --json > "$TMP/storage-plan-write.json"
json_valid storage-plan "$TMP"/storage-plan*.json
json_valid storage "$TMP/storage-root/etc/sparkctl/storage.d/mnt-shared.json"
# ---- storage bench: fio on a directory of the test's (tests/cli/t1040 covers the rest)
if command -v fio > /dev/null; then
  mkdir "$TMP/storage"
  "$SPARKCTL" storage bench "$TMP/storage" --size 1M --runtime 1 --json > "$TMP/storage-bench.json"
  json_valid storage-bench "$TMP/storage-bench.json"
fi

# ---- no real in any output has more digits than it was measured with
for f in "$TMP"/*.json "$TMP"/job-*/summary.json; do
  ! grep -qE '[0-9]\.[0-9]{16,}' "$f" || fail "$f has an unrounded real: $(grep -oE '[0-9]+\.[0-9]{16,}' "$f" | head -1)"
done
# ---- and each ends with one newline, not a blank line
for f in "$TMP"/*.json; do
  [ "$f" != "$TMP/peer.json" ] || continue # made by the test, not by sparkctl
  [ "$(tail -c 2 "$f" | od -An -c | tr -d ' ')" = '}\n' ] || fail "$f does not end with '}' and one newline"
done

# ---- drift is caught: each of these edits of a valid document is refused
drift() { # SCHEMA FILE PYTHON-STATEMENT-ON-d WHAT
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[3], "w"))' \
    "$2" "$3" "$TMP/drift.json" || fail "cannot edit $2"
  if /usr/bin/python3 tests/validate-json.py "$1" "$TMP/drift.json" 2> "$TMP/drift.err"; then
    fail "the $1 schema accepts $4"
  fi
  [ -s "$TMP/drift.err" ] || fail "no message for $4"
}
drift inventory "$TMP/topo-spark-1cable.json" 'del d["schema_version"]' "a document without schema_version"
drift inventory "$TMP/topo-spark-1cable.json" 'n=d["netdevs"][1]; n["speed_mbps"]=n.pop("speed_gbps")' "the old key speed_mbps"
drift inventory "$TMP/topo-spark-1cable.json" 'd["system"]["memory"]["memory_total_bytes"]=131415797760.5' "a size that is not an integer"
drift inventory "$TMP/topo-spark-1cable.json" 'd["schema_version"]=1' "schema_version 1 under version 2's keys"
drift agent-status "$TMP/agent-gb10.json" 'g=d["gpus"][0]; g["utilization_percent"]=37.0; del g["utilization_ratio"]' "a percent in place of the ratio"
drift agent-status "$TMP/agent-gb10.json" 'd["gpus"][0]["utilization_ratio"]=37.0' "a ratio above 1"
drift agent-status "$TMP/agent-gb10.json" 'd["gpus"][0]["index"]="0"' "a GPU index as a string"
drift status "$TMP/status-gb10.json" 'd["nodes"][0]["status"]["gpus"][0]["memory_unified"]=True' "a key status does not have (inside agent status)"
drift bench-nccl "$TMP/nccl-all.json" 'r=d["tests"][0]["results"][0]["out_of_place"]; r["algbw_gbs"]=r.pop("algbw_gbytes_per_second")' "the old key algbw_gbs"
drift env "$TMP/env-two.json" 'd=d["nodes"]' "a bare array of nodes"
drift doctor "$TMP/doctor-spark-ofed.json" 'd["findings"][0]["status"]="BAD"' "an unknown finding status"
drift launch-summary "$TMP/job-ok/summary.json" 'd["seconds"]=d.pop("duration_seconds")' "the old key seconds"
drift doctor-list "$TMP/checks.json" 'd["checks"][0]["scope"]="node"; d["checks"][0]["extra"]=1' "an unknown key in a check"
drift cluster "$TMP/cluster.json" 'd["nodes"][0]["id"]="0123"' "a node id that is not 32 hex digits"
drift storage "$TMP/storage-root/etc/sparkctl/storage.d/mnt-shared.json" 'd["nodes"][0]["access"]="write"' "an access other than ro and rw"
drift storage "$TMP/storage-root/etc/sparkctl/storage.d/mnt-shared.json" 'd["target"]["port"]="4421"' "a port as a string"
drift storage-plan "$TMP/storage-plan.json" 'd["node"]="spark1"' "the keys of --write among the printed plan's"
if [ -f "$TMP/storage-bench.json" ]; then
  drift storage-bench "$TMP/storage-bench.json" \
    'p=d["paths"][0]; p["read_mbps"]=p.pop("read_gbytes_per_second")' "a bandwidth key without its unit"
fi
