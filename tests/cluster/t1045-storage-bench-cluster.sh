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

# Ctrl-C (during the first node's run, as nodes run one at a time first):
# the node's run ends with the command (fio ended, its test file
# removed) instead of running on to --runtime.  fio_on_dir: fio processes
# whose --filename is below $dir.
fio_on_dir() {
  local p n=0
  for p in $(pgrep -x fio); do
    tr '\0' '\n' < "/proc/$p/cmdline" 2> /dev/null | grep -q "^--filename=$dir/" && n=$((n + 1))
  done
  echo $n
}
# The real fio, kept running (--time_based) on the nodes (their PATH starts
# with bin/) until it is interrupted.
for n in node0 node1; do
  printf '#!/bin/sh\nexec %s "$@" --time_based\n' "$(command -v fio)" > "$TMP/cluster/$n/bin/fio"
  chmod +x "$TMP/cluster/$n/bin/fio"
done
# A background job of a script starts with SIGINT ignored: give it back its default.
env --default-signal=INT "$SPARKCTL" storage bench -H node0,node1 --remote-sparkctl sparkctl \
  "$dir" --size 2M --runtime 600 --profiles seq-read > "$TMP/int.out" 2>&1 &
bench=$!
at_exit "kill -9 $bench 2> /dev/null || :"
for _ in $(seq 600); do
  [ "$(fio_on_dir)" = 1 ] && break
  kill -0 $bench 2> /dev/null || { cat "$TMP/int.out" >&2; fail "storage bench ended before fio ran"; }
  sleep 0.1
done
[ "$(fio_on_dir)" = 1 ] || fail "fio never ran on the first node"
kill -INT $bench
wait $bench || :
# Bounded by far less than --runtime: the nodes end fio when the command is gone.
for _ in $(seq 600); do
  [ "$(fio_on_dir)" = 0 ] && [ -z "$(ls -A "$dir")" ] && break
  sleep 0.1
done
[ "$(fio_on_dir)" = 0 ] || fail "fio ran on after Ctrl-C"
[ -z "$(ls -A "$dir")" ] || fail "a test file was left after Ctrl-C: $(ls -A "$dir")"
rm "$TMP/cluster/node0/bin/fio" "$TMP/cluster/node1/bin/fio"

# A node that cannot be reached: named, exit 3, the other measured.
cluster_node_unreachable node1
expect 3 "$SPARKCTL" storage bench -H node0,node1 --remote-sparkctl sparkctl "$dir" \
  --size 2M --runtime 1 --profiles seq-write --json
json_valid storage-bench "$TMP/out"
[ "$(json_get "$TMP/out" '[e["node"] for e in d["errors"]]')" = "['node1']" ] || fail "node1's error"
[ "$(json_get "$TMP/out" '[p["node"] for p in d["paths"]]')" = "['node0']" ] || fail "node0's row"
[ -z "$(ls -A "$dir")" ] || fail "a test file was left: $(ls -A "$dir")"
