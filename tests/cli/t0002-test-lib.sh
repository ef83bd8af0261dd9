#!/usr/bin/env bash
# tests/lib.sh itself: a child of a test's shell that a signal reaches before
# it runs its command (here a background job) does not run
# the test's cleanup and take $TMP away from the running test; the test's own
# shell still cleans up; kill_child signals only unreaped children of the
# shell, never a PID that may since be another program's.
. "$SRCDIR/tests/lib.sh"

# A test of its own, with its own $TMP: 200 background jobs, each sent
# SIGTERM at once (mostly before it has started 'sleep'); then it says
# whether its $TMP is still there.
cat > "$TMP/inner.sh" << 'INNER'
. "$SRCDIR/tests/lib.sh"
echo "$TMP" > "$1"
for i in $(seq 200); do
  sleep 2 &
  kill -TERM $! 2> /dev/null || :
done
# A signal that came while the job's shell was resetting its traps is lost: its
# 'sleep' runs its 2 s.
wait 2> /dev/null || :
[ -d "$TMP" ] && echo "still there"
INNER
run bash "$TMP/inner.sh" "$TMP/inner-tmp"
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "the inner test exited $status"; }
grep -qx "still there" "$TMP/out" || { cat "$TMP/err" >&2; fail "the inner test lost its \$TMP"; }
inner_tmp=$(cat "$TMP/inner-tmp")
case $inner_tmp in "${TMPDIR:-/tmp}"/sparkctl-test.*) ;; *) fail "odd inner \$TMP: $inner_tmp" ;; esac
[ ! -e "$inner_tmp" ] || fail "the inner test's \$TMP was not removed when it ended"

# kill_child: our child is stopped and reaped; a process whose parent is
# another (here a shell that has exited, so it has been adopted) is left alone.
sleep 60 &
child=$!
kill_child "$child"
! kill -0 "$child" 2> /dev/null || fail "kill_child left its child running"
stranger=$(sh -c 'sleep 60 > /dev/null 2>&1 & echo $!')
kill_child "$stranger"
kill -0 "$stranger" 2> /dev/null || fail "kill_child signalled a process that is not a child"
kill "$stranger"
kill_child 999999999
