#!/usr/bin/env bash
# A capture stopped by SIGTERM or SIGINT while it writes removes its partial
# tree and dies of the signal; after SIGKILL, the next capture removes the
# partial tree the killed one left, and nothing else: not a partial tree of
# a capture still running, not a directory named like one that sparkctl did
# not make, not what a symlink inside the stale tree points to.
#
# $1 is the LD_PRELOAD library that holds a capture at its first symlink
# (tests/cli/pause_symlinkat.c): the partial tree exists then, and the
# capture is in the middle of writing it.
. "$SRCDIR/tests/lib.sh"

SHIM=${1:?usage: t0530-capture-interrupted.sh PAUSE_LIBRARY}
[ -f "$SHIM" ] || fail "no $SHIM"
FIXTURE=$FIXTURES/spark-1cable
# An AddressSanitizer build wants its runtime first; the preloaded library comes first.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# start_paused NAME OUTDIR [WRAPPER...]: start 'capture OUTDIR' in the
# background (pid in $pid) and return once it holds at its first symlink.
# Its stderr goes to $TMP/NAME.err.
start_paused() {
  local name=$1 out=$2 line
  shift 2
  mkfifo "$TMP/$name.notify" "$TMP/$name.resume"
  # Opened both ways, neither FIFO blocks the test, whatever the capture does.
  exec 3<> "$TMP/$name.notify" 4<> "$TMP/$name.resume"
  PAUSE_NOTIFY=$TMP/$name.notify PAUSE_RESUME=$TMP/$name.resume LD_PRELOAD=$SHIM \
    "$@" "$SPARKCTL" capture --root "$FIXTURE" "$out" 2> "$TMP/$name.err" 3>&- 4>&- &
  pid=$!
  at_exit "kill -s KILL $pid 2> /dev/null"
  # A limit only so that a capture that never gets there fails the test.
  read -r -t 60 -u 3 line || { cat "$TMP/$name.err" >&2; fail "capture $name never reached a symlink"; }
  exec 3>&-
  eval "resume_$name() { printf x >&4; exec 4>&-; }"
}

# finish PID: wait for it; its exit status in $status.
finish() {
  set +e
  wait "$1"
  status=$?
  set -e
}

partials() { find "$TMP" -maxdepth 1 -name "$(basename "$1").partial-*" -printf '%f\n' | sort; }

# ---- SIGTERM and SIGINT: nothing is left --------------------------------
for sig in TERM INT; do
  out=$TMP/cap-$sig
  # A background job of a script starts with SIGINT ignored: give it back its default.
  start_paused "$sig" "$out" env --default-signal="$sig"
  [ "$(partials "$out" | wc -l)" = 1 ] || fail "no partial tree while the capture writes"
  kill -s "$sig" "$pid"
  "resume_$sig"
  finish "$pid"
  want=$((128 + $(kill -l "$sig")))
  [ "$status" = "$want" ] || { cat "$TMP/$sig.err" >&2; fail "SIG$sig: exit $status, expected $want"; }
  contains "$TMP/$sig.err" "sparkctl capture: stopped by"
  [ -z "$(partials "$out")" ] || fail "SIG$sig left $(partials "$out")"
  [ ! -e "$out" ] || fail "SIG$sig: $out exists"
done

# ---- SIGKILL: the next capture removes what it left ----------------------
out=$TMP/cap
start_paused KILL "$out"
kill -s KILL "$pid"
resume_KILL
finish "$pid"
[ "$status" = 137 ] || fail "SIGKILL: exit $status"
stale=$(partials "$out")
[ "$(echo "$stale" | wc -w)" = 1 ] || fail "SIGKILL left no partial tree to clean: '$stale'"
stale=$TMP/$stale

# A symlink inside the stale tree to a directory outside: removed, not followed.
mkdir "$TMP/outside"
echo keep > "$TMP/outside/file"
ln -s "$TMP/outside" "$stale/zz-link-out"
# The same stale tree copied elsewhere, reached through a symlink named like a partial tree.
mkdir "$TMP/elsewhere"
cp -a "$stale" "$TMP/elsewhere/copy"
rm "$TMP/elsewhere/copy/zz-link-out"
ln -s "$TMP/elsewhere/copy" "$out.partial-Link00"
# A directory named like a partial tree that sparkctl did not make.
mkdir "$out.partial-Other0"
echo mine > "$out.partial-Other0/file"
(cd "$TMP" && find elsewhere outside "$(basename "$out").partial-Other0" -printf '%p %y %s\n' | sort) \
  > "$TMP/foreign-before"

# The next capture, here one to another directory beside it, held while it
# writes, has removed the stale tree, and only that.
start_paused LIVE "$TMP/live"
live_pid=$pid
live_partial=$(partials "$TMP/live")
[ -n "$live_partial" ] || fail "no partial tree of the running capture"
[ ! -e "$stale" ] || fail "the killed capture's partial tree $stale is still there"
contains "$TMP/LIVE.err" "removed $stale, left by a capture that was killed"

# Another capture, while that one runs, leaves its partial tree alone.
expect 0 "$SPARKCTL" capture --root "$FIXTURE" "$out"
[ -f "$out/.sparkctl/inventory.json" ] || fail "the capture after the killed one is incomplete"
(cd "$TMP" && find elsewhere outside "$(basename "$out").partial-Other0" -printf '%p %y %s\n' | sort) \
  > "$TMP/foreign-after"
same "$TMP/foreign-before" "$TMP/foreign-after"
[ "$(readlink "$out.partial-Link00")" = "$TMP/elsewhere/copy" ] || fail "the symlink was changed"
[ "$(partials "$TMP/live")" = "$live_partial" ] || fail "the running capture's partial tree was touched"

# The held capture goes on and completes.
resume_LIVE
finish "$live_pid"
[ "$status" = 0 ] || { cat "$TMP/LIVE.err" >&2; fail "the held capture exited $status"; }
[ -f "$TMP/live/.sparkctl/inventory.json" ] || fail "the held capture is incomplete"
[ -z "$(partials "$TMP/live")" ] || fail "the held capture left $(partials "$TMP/live")"
# Both completed captures hold the same tree, without any mark of their making.
for name in $(ls -A "$out"); do
  [ -e "$FIXTURE/$name" ] || fail "the capture holds $name, which the tree it copies lacks"
done
diff -r --no-dereference "$out" "$TMP/live" >&2 || fail "two captures of one tree differ"
expect 0 "$SPARKCTL" capture --root "$FIXTURE" "$TMP/plain"
diff -r --no-dereference "$out" "$TMP/plain" >&2 || fail "a capture after a killed one differs from a plain one"
