#!/usr/bin/env bash
# Every check of 'sparkctl doctor' against planted faults (tests/doctor/cases.txt):
# each must FAIL or WARN on its fault, with a fix, and PASS without it.
. "$SRCDIR/tests/lib.sh"
python3 "$SRCDIR/tests/doctor/run-cases.py"

# Every check has at least one case that passes and one that does not.
for id in $("$SPARKCTL" doctor --list | awk '$2 == "node" { print $1 }'); do
  grep -Eq "^$id +[^ ]+ +PASS" "$SRCDIR/tests/doctor/cases.txt" || fail "$id has no PASS case"
  grep -Eq "^$id +[^ ]+ +(FAIL|WARN)" "$SRCDIR/tests/doctor/cases.txt" || fail "$id has no FAIL/WARN case"
done
