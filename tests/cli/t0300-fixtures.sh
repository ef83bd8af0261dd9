#!/usr/bin/env bash
# The committed fixture trees are exactly what tests/fixtures/make-fixtures.sh writes.
. "$SRCDIR/tests/lib.sh"

"$SRCDIR/tests/fixtures/make-fixtures.sh" "$TMP/fixtures" > /dev/null
for f in "$TMP"/fixtures/*; do
  name=$(basename "$f")
  diff -r --no-dereference "$SRCDIR/tests/fixtures/$name" "$f" >&2 \
    || fail "tests/fixtures/$name differs from what make-fixtures.sh writes"
done
