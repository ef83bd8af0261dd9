#!/usr/bin/env bash
# env across nodes: HCA lists must pair and bootstrap interfaces reach each other.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
# node2.json: the peer of spark-1cable, the same port cabled, .12 addresses.
peer() { # peer FIXTURE HOSTNAME OUT [SUBNET-SHIFT]
  "$SPARKCTL" topo --root "tests/fixtures/$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["system"]["hostname"] = sys.argv[1]
shift = int(sys.argv[2])
for n in d["netdevs"]:
    for a in n["ipv4"]:
        if a["address"].startswith("192.168."):
            o = a["address"].split(".")
            o[2] = str(int(o[2]) + shift)
            o[3] = "12"
            a["address"] = ".".join(o)
json.dump(d, sys.stdout)' "$2" "${4:-0}" > "$3"
}
"$SPARKCTL" topo --root tests/fixtures/spark-1cable --json > "$TMP/a.json"
peer spark-1cable spark-02 "$TMP/b.json"
expect 0 "$SPARKCTL" env --from "$TMP/a.json" --from "$TMP/b.json"
contains "$TMP/out" "# sparkctl env: spark-01, topology pair"
contains "$TMP/out" "# sparkctl env: spark-02, topology pair"
[ "$(grep -c "^export NCCL_IB_HCA='=rocep1s0f1,roceP2p1s0f1'" "$TMP/out")" = 2 ] || fail "both nodes' lists"

expect 0 "$SPARKCTL" env --from "$TMP/a.json" --from "$TMP/b.json" --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema_version"] == 1 and [n["node"] for n in d["nodes"]] == ["spark-01","spark-02"], d' "$TMP/out" \
  || fail "json across nodes"

# Different ports cabled on the two nodes: the lists would not pair.
peer spark-ofed spark-03 "$TMP/c.json"
expect 4 "$SPARKCTL" env --from "$TMP/a.json" --from "$TMP/c.json"
contains "$TMP/err" "HCA 1 is rocep1s0f1 (port p1 half 0) on spark-01 but mlx5_0 (port p0 half 0) on spark-03"

# Different numbers of HCAs.
"$SPARKCTL" topo --root tests/fixtures/spark-2cable --json > "$TMP/d.json"
expect 4 "$SPARKCTL" env --from "$TMP/a.json" --from "$TMP/d.json"
contains "$TMP/err" "spark-01 has 2 fabric HCAs and spark-01 has 4"

# Same ports, but the peer's twins sit on other subnets: unreachable.
peer spark-1cable spark-04 "$TMP/e.json" 10
expect 4 "$SPARKCTL" env --from "$TMP/a.json" --from "$TMP/e.json"
contains "$TMP/err" "HCA 1: rocep1s0f1 of spark-01 is on 192.168.177.0/24 but rocep1s0f1 of spark-04 is on 192.168.187.0/24"
contains "$TMP/err" "bootstrap interfaces cannot reach each other"

# Two nodes with one address.
expect 4 "$SPARKCTL" env --from "$TMP/a.json" --from "$TMP/a.json"
contains "$TMP/err" "spark-01 and spark-01 both have the address 192.168.177.11"
