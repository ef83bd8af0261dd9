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
