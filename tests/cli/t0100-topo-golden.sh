#!/usr/bin/env bash
# 'sparkctl topo' and 'topo --json' on every fixture, against golden files.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
for f in spark-1cable spark-2cable spark-ring spark-ofed spark-gid-drift ib-server; do
  expect 0 "$SPARKCTL" topo --root "tests/fixtures/$f"
  [ ! -s "$TMP/err" ] || fail "topo $f wrote to stderr: $(cat "$TMP/err")"
  golden "topo-$f.txt" "$TMP/out"
  # Readable on an 80-column terminal.
  awk -v f="$f" 'length($0) > 80 { print f ": line longer than 80 columns: " $0; bad = 1 } END { exit bad }' "$TMP/out" \
    || fail "topo output of $f is wider than 80 columns"

  expect 0 "$SPARKCTL" topo --root "tests/fixtures/$f" --json
  # The version of the sparkctl that probed is not part of the golden file.
  sed 's/"sparkctl_version": "[^"]*"/"sparkctl_version": "VERSION"/' "$TMP/out" > "$TMP/json"
  golden "topo-$f.json" "$TMP/json"
done

# SPARKCTL_ROOT works like --root.
expect 0 env SPARKCTL_ROOT=tests/fixtures/spark-1cable "$SPARKCTL" topo
golden topo-spark-1cable.txt "$TMP/out"
