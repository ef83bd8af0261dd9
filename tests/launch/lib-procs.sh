# shellcheck shell=bash
# tests/launch/lib-procs.sh - sourced after tests/lib.sh by the tests of
# commands that start and end processes (launch, agent hold).
#
# Set MARK_BASE (a hundreds digit no other test of this folder uses, e.g.
# 6 gives marks 601, 602, ...) before sourcing.  Every long-running
# process of a test is 'sleep MARK', MARK = N.PID with a number of its own
# (new_mark sets M): what a command left behind is found by it, and
# whatever a failed check leaves running is ended by it at exit.

: "${MARK_BASE:?set MARK_BASE before sourcing lib-procs.sh}"

# no_sanitizer FILE: a sanitizer report in FILE fails the test (an agent's
# stderr is passed on, so its reports land there too).
no_sanitizer() {
  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; then
    cat "$1" >&2
    fail "a sanitizer report in $1"
  fi
}
# run CMD...: as in lib.sh, and a sanitizer report on stderr fails the test.
run() {
  set +e
  "$@" > "$TMP/out" 2> "$TMP/err"
  status=$?
  set -e
  no_sanitizer "$TMP/err"
}
# show: the last command's output, for a failure message.
show() {
  echo "--- stdout:" >&2
  head -c 4000 "$TMP/out" >&2
  echo "--- stderr:" >&2
  head -c 4000 "$TMP/err" >&2
}
# want STATUS: the last command exited STATUS.
want() { [ "$status" = "$1" ] || { show; fail "exited $status, expected $1"; }; }

# wait_for SECONDS WHAT CMD...: poll CMD until it succeeds; fail after SECONDS
# (a bound against hangs, not a timing check).
wait_for() {
  local limit=$1 what=$2 i=0
  shift 2
  while ! "$@" > /dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -le "$((limit * 50))" ] || fail "waited ${limit}s for $what"
    sleep 0.02
  done
}

marks=0
new_mark() {
  marks=$((marks + 1))
  M="$((MARK_BASE * 100 + marks)).$$"
}
# left MARK: the live processes with 'sleep MARK' in their command line.
left() { pgrep -af -- "sleep $1( |\$)" || true; }
count_left() { pgrep -f -- "sleep $1( |\$)" | wc -l; }
has_left() { [ "$(count_left "$1")" -ge "$2" ]; }
gone() { [ -z "$(left "$1")" ]; }
# sleeping MARK N: at least N processes that are 'sleep MARK' themselves
# (not a shell or an agent whose command line holds the words): a command
# that starts them after its traps has set them.
sleeping() { [ "$(pgrep -f -- "^sleep $1( |\$)" | wc -l)" -ge "$2" ]; }
none_left() {
  local l
  l=$(left "$1")
  [ -z "$l" ] || fail "left behind $2: $l"
}
kill_marked() {
  local p pat="sleep ${MARK_BASE}[0-9][0-9]\\.$$"
  p=$(pgrep -f -- "$pat( |\$)") || return 0
  # shellcheck disable=SC2086
  kill -KILL $p 2> /dev/null
}
at_exit kill_marked
# Background commands a test started (their pids in BG) end with it.
BG=""
# shellcheck disable=SC2016
at_exit 'for p in $BG; do kill -KILL "$p" 2> /dev/null; done'
