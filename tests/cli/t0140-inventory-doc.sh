#!/usr/bin/env bash
# docs/inventory.md's field tables are generated from the inventory's descriptors
# (src/inventory/schema.c).  SPARKCTL_UPDATE_GOLDEN=1 rewrites them in the file.
. "$SRCDIR/tests/lib.sh"
: "${INVENTORY_DOC:?run the tests with 'meson test', which sets INVENTORY_DOC}"

"$INVENTORY_DOC" < "$SRCDIR/docs/inventory.md" > "$TMP/inventory.md" || fail "inventory-doc failed"
if [ "${SPARKCTL_UPDATE_GOLDEN:-}" = 1 ]; then
  cp "$TMP/inventory.md" "$SRCDIR/docs/inventory.md"
fi
same "$SRCDIR/docs/inventory.md" "$TMP/inventory.md"
