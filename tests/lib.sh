# tests/lib.sh - sourced by every shell test.
#
# Provides a private temporary directory ($TMP, removed on exit however the
# test ends) and small assertion helpers.  A test fails on the first
# failed assertion (exit 1) and is skipped with exit 77.
set -eu

: "${SPARKCTL:?run the tests with 'meson test', which sets SPARKCTL}"
: "${SRCDIR:?}"
FIXTURES=$SRCDIR/tests/fixtures
GOLDEN=$SRCDIR/tests/golden

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sparkctl-test.XXXXXX")
# What commands keep between runs (doctor's last report) stays in the test's directory.
export SPARKCTL_STATE_DIR=$TMP/state
# No cluster file of this machine's (~/.config/sparkctl, /etc/sparkctl) reaches a
# test: commands without -H run here, as the tests expect.  A test of the cluster
# file sets SPARKCTL_CLUSTER (or --cluster) to its own.
export SPARKCTL_CLUSTER=none
_cleanups=""
# at_exit CMD: run CMD when the test ends (last registered runs first).
at_exit() { _cleanups="$1; $_cleanups"; }
_on_exit() {
  local rc=$?
  # Only the test's own shell cleans up.  A child it forks (a background
  # job, a command substitution) carries these traps until it runs its
  # command, and a signal that reaches it before then runs them there:
  # it would remove $TMP under the running test.
  [ "$BASHPID" = "$$" ] || exit $rc
  set +e
  eval "$_cleanups"
  rm -rf "$TMP"
  exit $rc
}
trap _on_exit EXIT
trap 'exit 130' INT TERM

# kill_child PID: SIGTERM PID and wait for it, if it is still an unreaped
# child of this shell.  A PID that was waited for may be another program's
# by now (PIDs are reused), even another test's: it is left alone.
kill_child() {
  local stat
  { read -r stat < "/proc/$1/stat"; } 2> /dev/null || return 0
  # "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
  set -- "$1" ${stat##*) }
  [ "$3" = "$$" ] || return 0
  kill "$1" 2> /dev/null || :
  wait "$1" 2> /dev/null || :
}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
note() { echo "# $*"; }

# run CMD...: run it, keeping stdout in $TMP/out, stderr in $TMP/err and the
# exit status in $status; never fails by itself.
run() {
  set +e
  "$@" > "$TMP/out" 2> "$TMP/err"
  status=$?
  set -e
}

# expect STATUS CMD...: run CMD and require that exit status.
expect() {
  local want=$1; shift
  run "$@"
  if [ "$status" != "$want" ]; then
    echo "--- stdout:" >&2; cat "$TMP/out" >&2
    echo "--- stderr:" >&2; cat "$TMP/err" >&2
    fail "'$*' exited $status, expected $want"
  fi
}

# contains FILE TEXT: FILE has a line containing TEXT (fixed string).
contains() {
  grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "'$2' not found in $1"; }
}
lacks() {
  ! grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; cat "$1" >&2; fail "'$2' found in $1"; }
}

# no_controls FILE...: what a terminal would show safely - no C0 control but
# tab and newline, no DEL, no C1 control (U+0080-U+009F, 0xc2 0x80-0x9f in
# UTF-8), nothing that is not UTF-8.
no_controls() {
  python3 - "$@" <<'PY' || fail "a control character reached the output"
import re, sys
bad = re.compile(rb'[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]')
ok = True
for path in sys.argv[1:]:
    data = open(path, 'rb').read()
    m = bad.search(data)
    if m:
        print(f'{path}: {m.group()!r} in {data[max(0, m.start() - 40):m.end() + 20]!r}',
              file=sys.stderr)
        ok = False
    try:
        data.decode('utf-8')
    except UnicodeDecodeError as e:
        print(f'{path}: {e}', file=sys.stderr)
        ok = False
sys.exit(0 if ok else 1)
PY
}

# no_trailing_blanks FILE...: no line ends with a space or a tab (a table's
# empty last column, a padded cell), which diffs, copies and golden files trip on.
no_trailing_blanks() {
  local f bad=0
  for f in "$@"; do
    if grep -nE '[[:blank:]]$' "$f" > "$TMP/blanks" 2> /dev/null; then
      echo "--- lines of $f that end with a blank:" >&2
      sed 's/[[:blank:]]*$/&<|/' "$TMP/blanks" >&2
      bad=1
    fi
  done
  [ "$bad" = 0 ] || fail "a line of the output ends with a blank"
}

# same FILE1 FILE2: identical content (shows a diff otherwise).
same() {
  diff -u "$1" "$2" >&2 || fail "$1 and $2 differ"
}

# golden NAME FILE: FILE equals tests/golden/NAME.  With SPARKCTL_UPDATE_GOLDEN=1
# the golden file is rewritten instead (then review the diff).
golden() {
  if [ "${SPARKCTL_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$2" "$GOLDEN/$1"
    return
  fi
  [ -f "$GOLDEN/$1" ] || fail "no golden file tests/golden/$1 (run with SPARKCTL_UPDATE_GOLDEN=1)"
  no_trailing_blanks "$2"
  diff -u "$GOLDEN/$1" "$2" >&2 || fail "output differs from tests/golden/$1"
}

# json_get FILE EXPR: evaluate a Python expression on the JSON document 'd'.
json_get() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# json_valid [--lines] SCHEMA FILE...: each FILE conforms to docs/schemas/SCHEMA.schema.json
# (tests/validate-json.py, with Debian's python3-jsonschema).
json_valid() {
  /usr/bin/python3 "$SRCDIR/tests/validate-json.py" "$@" || fail "not valid against docs/schemas/${1#--lines }: ${*:2}"
}

# require_root: tests that change network namespaces need root.  In CI
# (SPARKCTL_REQUIRE_ROOT_TESTS=1) a missing privilege is a failure, not a skip.
require_root() {
  local why=""
  [ "$(id -u)" = 0 ] || why="not root"
  command -v ip > /dev/null 2>&1 || why="no 'ip' command"
  if [ -n "$why" ]; then
    [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "$why, and this run requires root tests"
    skip "$why"
  fi
}
