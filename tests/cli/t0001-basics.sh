#!/usr/bin/env bash
# The command line itself: help, version, unknown commands and options, exit codes.
. "$SRCDIR/tests/lib.sh"

expect 0 "$SPARKCTL" --help
contains "$TMP/out" "usage: sparkctl"
contains "$TMP/out" "topo"
contains "$TMP/out" "capture"
expect 0 "$SPARKCTL" help
contains "$TMP/out" "commands:"

expect 0 "$SPARKCTL" --version
grep -Eq '^sparkctl [0-9]+\.[0-9]+\.[0-9]+ \(git [^)]+\)$' "$TMP/out" || fail "bad version line: $(cat "$TMP/out")"
expect 0 "$SPARKCTL" version

# help COMMAND and COMMAND --help print the same text.
expect 0 "$SPARKCTL" help topo
cp "$TMP/out" "$TMP/help1"
expect 0 "$SPARKCTL" topo --help
same "$TMP/help1" "$TMP/out"
contains "$TMP/out" "usage: sparkctl topo"
contains "$TMP/out" "--root DIR"
contains "$TMP/out" "--from FILE"

# Sub-verbs: the same help by 'help COMMAND VERB' and 'COMMAND VERB --help',
# the list of verbs by 'help COMMAND'; a mistyped verb gets the nearest one.
expect 0 "$SPARKCTL" help bench nccl
cp "$TMP/out" "$TMP/help1"
expect 0 "$SPARKCTL" bench nccl --help
same "$TMP/help1" "$TMP/out"
contains "$TMP/out" "usage: sparkctl bench nccl"
expect 0 "$SPARKCTL" help bench
contains "$TMP/out" "  link     "
expect 2 "$SPARKCTL" bench lnk
contains "$TMP/err" "unknown benchmark 'lnk'; did you mean 'link'?"
expect 2 "$SPARKCTL" help bench lnk
contains "$TMP/err" "did you mean 'link'?"
expect 0 "$SPARKCTL" help agent hold
contains "$TMP/out" "usage: sparkctl agent hold"
# 'agent --help' sends the reader to each command's help, which tells more than its usage line.
expect 0 "$SPARKCTL" agent --help
contains "$TMP/out" "'sparkctl agent COMMAND --help' tells more."
for verb in status ping launch reap hold; do
  expect 0 "$SPARKCTL" agent $verb --help
  [ "$(grep -cv '^usage: \|^   or: \|^$' "$TMP/out")" -ge 2 ] || fail "'agent $verb --help' tells no more than its usage"
done

# Unknown commands: the nearest one, exit 2.
expect 2 "$SPARKCTL" tpo
contains "$TMP/err" "'tpo' is not a sparkctl command. The most similar command is 'topo'."
expect 2 "$SPARKCTL" frobnicate
contains "$TMP/err" "'frobnicate' is not a sparkctl command."
lacks "$TMP/err" "most similar"
expect 2 "$SPARKCTL" help tpo
contains "$TMP/err" "did you mean 'topo'?"
expect 2 "$SPARKCTL"
contains "$TMP/err" "usage: sparkctl"
expect 2 "$SPARKCTL" --bogus
contains "$TMP/err" "unknown option '--bogus'"

# Bad options: one line naming the problem, exit 2.
expect 2 "$SPARKCTL" topo --jsn
contains "$TMP/err" "sparkctl topo: unknown option '--jsn'; did you mean '--json'?"
expect 2 "$SPARKCTL" topo extra
contains "$TMP/err" "unexpected argument 'extra'"
# "--json FILE" where the command writes files with -o: the hint says so.
expect 2 "$SPARKCTL" bench ddp --json out.json
contains "$TMP/err" "sparkctl bench ddp: unexpected argument 'out.json': --json prints the JSON on standard output; -o FILE writes it to a file"
[ ! -e out.json ] || fail "--json FILE wrote a file"
expect 2 "$SPARKCTL" bench nccl --json out.json
contains "$TMP/err" "unexpected argument 'out.json': --json prints"
expect 2 "$SPARKCTL" doctor --json extra
lacks "$TMP/err" "-o FILE"
expect 2 "$SPARKCTL" topo --root
contains "$TMP/err" "requires a value"
expect 2 "$SPARKCTL" topo --root "$FIXTURES/spark-1cable" --from x.json
contains "$TMP/err" "--root and --from cannot be used together"
expect 2 "$SPARKCTL" capture
contains "$TMP/err" "missing the output directory"

# A root that cannot be used is an error (1), not a crash.
expect 1 "$SPARKCTL" topo --root /nonexistent/dir
contains "$TMP/err" "cannot use '/nonexistent/dir' as the root"

# Every exit status defined in exitcode.h is documented in docs/exit-codes.md.
grep -Eo 'SPARKCTL_EXIT_[A-Z_]+ = [0-9]+' "$SRCDIR/src/exitcode.h" > "$TMP/codes"
[ -s "$TMP/codes" ] || fail "no exit codes found in exitcode.h"
while read -r name _ value; do
  grep -Eq "^\| *$value *\|" "$SRCDIR/docs/exit-codes.md" || fail "exit code $value ($name) is not in docs/exit-codes.md"
done < "$TMP/codes"

# Write errors on stdout are reported, not lost.
run bash -c "'$SPARKCTL' topo --root '$FIXTURES/spark-1cable' --json > /dev/full"
[ "$status" = 1 ] || fail "writing to /dev/full exited $status, expected 1"
contains "$TMP/err" "write error on standard output"
