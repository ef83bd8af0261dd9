#!/usr/bin/env bash
# Bad input to --from: one clear line naming the file, line and column or the field; exit 1.
. "$SRCDIR/tests/lib.sh"

printf '{\n  "schema_version": 1,\n  "rdma_devices": [\n    {"name": "x",}\n  ]\n}\n' > "$TMP/syntax.json"
expect 1 "$SPARKCTL" topo --from "$TMP/syntax.json"
contains "$TMP/err" "sparkctl topo: $TMP/syntax.json:4:"
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "expected one line of error"

printf '{"schema_version": 1, "netdevs": [{"name": "e", "mtu": "9000"}]}' > "$TMP/type.json"
expect 1 "$SPARKCTL" topo --from "$TMP/type.json"
contains "$TMP/err" "$TMP/type.json: netdevs[0].mtu: expected a non-negative integer"

printf '{"schema_version": 3}' > "$TMP/new.json"
expect 1 "$SPARKCTL" topo --from "$TMP/new.json"
contains "$TMP/err" "schema_version 3 is newer than this sparkctl reads (2)"

: > "$TMP/empty.json"
expect 1 "$SPARKCTL" topo --from "$TMP/empty.json"
contains "$TMP/err" "$TMP/empty.json:"

expect 1 "$SPARKCTL" topo --from - < /dev/null
contains "$TMP/err" "<stdin>:"

printf '\x00\x01\xff garbage' > "$TMP/binary.json"
expect 1 "$SPARKCTL" topo --from "$TMP/binary.json"

expect 1 "$SPARKCTL" topo --from "$TMP/missing.json"
contains "$TMP/err" "cannot open '$TMP/missing.json': No such file or directory"

expect 1 "$SPARKCTL" topo --from "$TMP"
contains "$TMP/err" "Is a directory"

# Larger than the limit: refused without reading it all into memory.
truncate -s 65M "$TMP/huge.json"
expect 1 "$SPARKCTL" topo --from "$TMP/huge.json"
contains "$TMP/err" "larger than 64 MiB"

# A valid JSON document that is not an inventory.
printf '[1,2,3]' > "$TMP/array.json"
expect 1 "$SPARKCTL" topo --from "$TMP/array.json"
contains "$TMP/err" "expected a JSON object"
