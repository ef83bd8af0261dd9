#!/usr/bin/env bash
# topo --json | topo --from - --json is the identity, on every fixture and live.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
for f in spark-1cable spark-2cable spark-ring spark-ofed spark-gid-drift ib-server; do
  "$SPARKCTL" topo --root "tests/fixtures/$f" --json > "$TMP/a.json"
  "$SPARKCTL" topo --from - --json < "$TMP/a.json" > "$TMP/b.json"
  same "$TMP/a.json" "$TMP/b.json"
  # From a file, and the table from a saved inventory equals the table from the tree.
  "$SPARKCTL" topo --from "$TMP/a.json" --json > "$TMP/c.json"
  same "$TMP/a.json" "$TMP/c.json"
  "$SPARKCTL" topo --root "tests/fixtures/$f" > "$TMP/a.txt"
  "$SPARKCTL" topo --from "$TMP/a.json" > "$TMP/b.txt"
  same "$TMP/a.txt" "$TMP/b.txt"
done

# The live host too.
"$SPARKCTL" topo --json > "$TMP/live.json"
"$SPARKCTL" topo --from - --json < "$TMP/live.json" > "$TMP/live2.json"
same "$TMP/live.json" "$TMP/live2.json"

# An inventory saved by a sparkctl of schema_version 1 (speed_mbps, rate_mbps,
# mem_total_bytes) reads as the same node: written in version 2's keys, equal
# to the inventory of the tree it was taken from.
for f in spark-1cable ib-server; do
  old=tests/cli/inventory-v1/$f.json
  grep -q '"schema_version": 1,' "$old" || fail "$old is not a version 1 inventory"
  grep -q '"speed_mbps": ' "$old" || fail "$old has no version 1 keys"
  # The CPUs (system.cpu) came later: a version 1 inventory has them unknown.
  "$SPARKCTL" topo --root "tests/fixtures/$f" --json |
    sed 's/"sparkctl_version": ".*"/"sparkctl_version": "VERSION"/' |
    python3 -c 'import json, sys
d = json.load(sys.stdin)
d["system"]["cpu"] = dict.fromkeys(d["system"]["cpu"])
print(json.dumps(d, indent=2, ensure_ascii=False))' > "$TMP/new.json"
  "$SPARKCTL" topo --from "$old" --json | sed 's/"sparkctl_version": ".*"/"sparkctl_version": "VERSION"/' > "$TMP/read.json"
  same "$TMP/new.json" "$TMP/read.json"
  "$SPARKCTL" topo --from "$old" > "$TMP/old.txt"
  "$SPARKCTL" topo --root "tests/fixtures/$f" > "$TMP/tree.txt"
  same "$TMP/tree.txt" "$TMP/old.txt"
done
