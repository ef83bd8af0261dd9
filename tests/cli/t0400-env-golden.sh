#!/usr/bin/env bash
# 'sparkctl env' on every fixture, in every format, against golden files.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
# fixture and the options its topology needs
cases="spark-1cable:
spark-2cable:--nodes 2
spark-ring:--nodes 3
spark-ofed:
spark-gid-drift:
ib-server:"

while IFS=: read -r f extra; do
  for fmt in sh env docker json; do
    # shellcheck disable=SC2086
    expect 0 "$SPARKCTL" env --root "tests/fixtures/$f" $extra --format "$fmt"
    golden "env-$f.$fmt" "$TMP/out"
  done
  # shellcheck disable=SC2086
  expect 0 "$SPARKCTL" env --root "tests/fixtures/$f" $extra --explain
  golden "env-$f.explain" "$TMP/out"
  # Every variable has its reason: one comment line before each export.
  [ "$(grep -c '^export ' "$TMP/out")" = "$(grep -c '^# ' "$TMP/out" | awk '{print $1 - 1}')" ] \
    || fail "$f: not every variable has a reason"
done <<< "$cases"

# The saved inventory gives the same environment as the tree.
"$SPARKCTL" topo --root tests/fixtures/spark-1cable --json > "$TMP/inv.json"
expect 0 "$SPARKCTL" env --from "$TMP/inv.json"
golden env-spark-1cable.sh "$TMP/out"
