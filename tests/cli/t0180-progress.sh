#!/usr/bin/env bash
# Work over 2 s says what it waits for on stderr when stderr is a terminal:
# status -H, doctor -H, top -H and bench link draw one line, redrawn in place
# and erased at the end.  Never when stderr is not a terminal, with --json
# or with -q.  The nodes are reached through a stand-in ssh that runs the
# command here once it is released: the test releases it when the line has
# appeared on the terminal (a pty), so nothing depends on how fast this
# machine is; where the line must not appear, its first command waits 3 s.
. "$SRCDIR/tests/lib.sh"

cat > "$TMP/ssh" << 'EOF2'
#!/bin/sh
case "$1" in -G | -O*) exit 1 ;; esac
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift 2
if [ -n "${SSH_STANDIN_RELEASE:-}" ]; then
  i=0
  while [ ! -e "$SSH_STANDIN_RELEASE" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
elif [ ! -e "$SSH_STANDIN_SLEPT" ]; then
  : > "$SSH_STANDIN_SLEPT" # the first command only: longer than the 2 s of the progress line
  sleep 3
fi
exec sh -c "$*"
EOF2
chmod +x "$TMP/ssh"
export SPARKCTL_SSH=$TMP/ssh
export SSH_STANDIN_SLEPT=$TMP/slept
host=sparkctl-standin-node.invalid

# on_tty WANT_LINE CMD...: run CMD with stderr on a pty (stdout to $TMP/out),
# its terminal output in $TMP/tty.  WANT_LINE: the progress line that must
# appear (the stand-in is released once it has), or "" for none.
on_tty() {
  local want=$1
  shift
  rm -f "$TMP/release" "$SSH_STANDIN_SLEPT"
  if [ -n "$want" ]; then export SSH_STANDIN_RELEASE=$TMP/release; else unset SSH_STANDIN_RELEASE; fi
  "$SRCDIR/tests/pty-run.py" --release-on "$want" --release-file "$TMP/release" "$TMP" "$@" ||
    fail "on a terminal: $*"
  python3 - "$want" "$TMP/tty" << 'PY' || fail "on a terminal: $*"
import sys
want, tty = sys.argv[1].encode(), open(sys.argv[2], "rb").read()
if want:
    i = tty.find(b"\r" + want)
    if i < 0:
        sys.exit(f"no progress line {want!r} on the terminal: {tty!r}")
    # erased at the end: a CR and erase-to-end-of-line after the last drawing
    if b"\r\x1b[K" not in tty[i:]:
        sys.exit(f"the progress line was not erased: {tty!r}")
    # redrawn in place: never a newline in it
    if b"\n" in tty[i:tty.rfind(b"\r\x1b[K")]:
        sys.exit(f"a newline inside the progress: {tty!r}")
    # the time it has waited, in seconds
    if not tty[i:].startswith(b"\r" + want + b" (") or b" s)\x1b[K" not in tty[i:]:
        sys.exit(f"no time in the progress line: {tty!r}")
PY
}

# On a terminal: the line, then the report as ever.
on_tty "status: asking 1 node" "$SPARKCTL" status -H "$host"
contains "$TMP/out" "$host"
on_tty "doctor: inspecting 1 node" "$SPARKCTL" doctor -H "$host"
contains "$TMP/out" "1 node:"
on_tty "top: sampling 1 node" "$SPARKCTL" top -H "$host" -n 1
on_tty "bench link: inspecting $host and $host-b" "$SPARKCTL" bench link -H "$host,$host-b"

# Not with --json or -q, even on a terminal.
on_tty "" "$SPARKCTL" status -H "$host" --json
lacks "$TMP/tty" "status: asking"
on_tty "" "$SPARKCTL" doctor -q -H "$host"
lacks "$TMP/tty" "doctor: inspecting"
on_tty "" "$SPARKCTL" doctor --json -H "$host"
lacks "$TMP/tty" "doctor: inspecting"

# Not when stderr is not a terminal (a pipe, a file).
unset SSH_STANDIN_RELEASE
rm -f "$SSH_STANDIN_SLEPT"
"$SPARKCTL" status -H "$host" 2>&1 > /dev/null | cat > "$TMP/piped"
lacks "$TMP/piped" "status: asking"
[ ! -s "$TMP/piped" ] || { cat -A "$TMP/piped" >&2; fail "status wrote to a piped stderr"; }
