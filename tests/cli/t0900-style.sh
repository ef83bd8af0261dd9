#!/usr/bin/env bash
# The whole C tree follows .clang-format.
. "$SRCDIR/tests/lib.sh"

if ! command -v clang-format > /dev/null 2>&1; then
  [ "${SPARKCTL_REQUIRE_STYLE:-}" = 1 ] && fail "clang-format is not installed"
  skip "clang-format is not installed"
fi
cd "$SRCDIR"
# Tracked files and new ones not yet committed (but not ignored build output).
files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h' 2>/dev/null || find src tests bench -name '*.[ch]')
[ -n "$files" ] || fail "no C files found"
# shellcheck disable=SC2086
clang-format --dry-run --Werror $files 2> "$TMP/err" || { head -50 "$TMP/err" >&2; fail "run: clang-format -i \$(git ls-files '*.[ch]')"; }
