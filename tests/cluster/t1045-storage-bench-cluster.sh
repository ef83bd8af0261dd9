#!/usr/bin/env bash
# 'sparkctl storage bench -H' across two namespace nodes with real sshd: the
# real fio on a directory both nodes see (each its own test file), one node
# after the other, then --concurrent with the aggregate of the concurrent run;
# a node that cannot be reached is named (exit 3) and the other is measured.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
command -v fio > /dev/null || skip "no fio (Debian: apt-get install fio)"
cluster_require
cluster_up 2
export TMPDIR=$TMP
dir=$TMP/shared
mkdir "$dir"

expect 0 "$SPARKCTL" storage bench -H node0,node1 --remote-sparkctl sparkctl "$dir" \
  --size 2M --runtime 1 --profiles seq-read,seq-write --concurrent --json
cp "$TMP/out" "$TMP/nodes.json"
json_valid storage-bench "$TMP/nodes.json"
[ "$(json_get "$TMP/nodes.json" '[p["node"] for p in d["paths"]]')" = "['node0', 'node1']" ] ||
  fail "one row per node, in order: $(json_get "$TMP/nodes.json" '[p.get("node") for p in d["paths"]]')"
[ "$(json_get "$TMP/nodes.json" '[p["node"] for p in d["concurrent"]["paths"]]')" = "['node0', 'node1']" ] ||
  fail "the concurrent run's rows"
[ "$(json_get "$TMP/nodes.json" 'all(p["read_gbytes_per_second"] > 0 and p["write_gbytes_per_second"] > 0 for p in d["paths"] + d["concurrent"]["paths"])')" = True ] ||
  fail "a figure is not positive"
# The aggregate is the sum of the concurrent rows, per profile.
/usr/bin/python3 - "$TMP/nodes.json" << 'PY' || fail "the aggregate is not the sum of the concurrent rows"
import json, sys
d = json.load(open(sys.argv[1]))
agg = {a["profile"]: a for a in d["concurrent"]["aggregate"]}
rows = d["concurrent"]["paths"]
for i, prof in enumerate(["seq-read", "seq-write"]):
    assert agg[prof]["nodes"] == 2, prof
    total = sum(r["runs"][i]["gbytes_per_second"] for r in rows)
    assert abs(agg[prof]["gbytes_per_second"] - total) < 0.002, (prof, agg[prof], total)
PY
[ -z "$(ls -A "$dir")" ] || fail "a test file was left: $(ls -A "$dir")"

# Text: both runs and the aggregate.
expect 0 "$SPARKCTL" storage bench -H node0,node1 --remote-sparkctl sparkctl "$dir" \
  --size 2M --runtime 1 --profiles seq-read --concurrent
contains "$TMP/out" "one node at a time:"
contains "$TMP/out" "all nodes at once:"
grep -E "^aggregate seq-read: [0-9.]+ GB/s, [0-9]+ IOPS over 2 nodes$" "$TMP/out" > /dev/null ||
  { cat "$TMP/out" >&2; fail "the aggregate line"; }
no_trailing_blanks "$TMP/out"

# A node that cannot be reached: named, exit 3, the other measured.
cluster_node_unreachable node1
expect 3 "$SPARKCTL" storage bench -H node0,node1 --remote-sparkctl sparkctl "$dir" \
  --size 2M --runtime 1 --profiles seq-write --json
json_valid storage-bench "$TMP/out"
[ "$(json_get "$TMP/out" '[e["node"] for e in d["errors"]]')" = "['node1']" ] || fail "node1's error"
[ "$(json_get "$TMP/out" '[p["node"] for p in d["paths"]]')" = "['node0']" ] || fail "node0's row"
[ -z "$(ls -A "$dir")" ] || fail "a test file was left: $(ls -A "$dir")"
