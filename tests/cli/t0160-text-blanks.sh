#!/usr/bin/env bash
# No line of sparkctl's text ends with a blank: every command's help, and what
# topo, doctor (-q, --list, several --from), env, top and launch print on the
# bundled captures and on this host, stdout and stderr.
. "$SRCDIR/tests/lib.sh"

# clean STATUS CMD...: expect, then no line of stdout or stderr ends with a blank.
clean() {
  expect "$@"
  no_trailing_blanks "$TMP/out" "$TMP/err"
}

clean 0 "$SPARKCTL" --help
clean 0 "$SPARKCTL" help
for c in topo capture env netplan doctor launch bench exporter top status help version agent \
  "bench nccl" "bench link" "agent status" "agent ping" "agent launch" "agent reap" "agent hold"; do
  # shellcheck disable=SC2086 # the words of a subcommand
  clean 0 "$SPARKCTL" $c --help
done
clean 0 "$SPARKCTL" doctor --list

froms=()
for dir in "$FIXTURES"/*/; do
  f=$(basename "$dir")
  clean 0 "$SPARKCTL" topo --root "$dir"
  run "$SPARKCTL" doctor --root "$dir"
  no_trailing_blanks "$TMP/out" "$TMP/err"
  run "$SPARKCTL" doctor -q --root "$dir"
  no_trailing_blanks "$TMP/out" "$TMP/err"
  run "$SPARKCTL" env --root "$dir" --explain
  no_trailing_blanks "$TMP/out" "$TMP/err"
  run "$SPARKCTL" top --root "$dir" -n 1
  no_trailing_blanks "$TMP/out" "$TMP/err"
  "$SPARKCTL" topo --root "$dir" --json > "$TMP/$f.json"
  froms+=(--from "$TMP/$f.json")
done
# The cluster's findings and the table of links across every capture.
run "$SPARKCTL" doctor "${froms[@]}"
no_trailing_blanks "$TMP/out" "$TMP/err"

# launch's summary: a table whose last column is empty.
clean 0 "$SPARKCTL" launch -H localhost -- true
contains "$TMP/err" "RANK"
clean 3 "$SPARKCTL" launch -H localhost -- sh -c 'exit 3'
