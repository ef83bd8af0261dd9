#!/usr/bin/env bash
# The option vocabulary on the command line: old names refused with the new
# one, --color and NO_COLOR, --root and --from wherever a node is read.
# (tests/unit/test-options.c holds every command's option table to it.)
. "$SRCDIR/tests/lib.sh"
F=$FIXTURES

# ---- renamed options: exit 2, one line naming the new name ----------------
renamed() { # OLD NEW CMD...
  local old=$1 new=$2; shift 2
  expect 2 "$SPARKCTL" "$@"
  contains "$TMP/err" "option '$old' is now '$new'"
  [ "$(grep -c . "$TMP/err")" = 2 ] || fail "$*: more than the error and the pointer to --help"
  [ ! -s "$TMP/out" ] || fail "$*: printed on stdout"
}
renamed -n -N launch -n 2 -- true
renamed --timeout --job-timeout launch --timeout 5 -- true
renamed --timeout --idle-timeout exporter --once --timeout 5
renamed -r --root-rank bench nccl -r 0
renamed --timeout --op-timeout bench nccl --timeout=3
renamed -q --qps bench link -H a,b -q 2
# Not offered as a near name, not in the help.
expect 2 "$SPARKCTL" launch --timeou 5 -- true
lacks "$TMP/err" "did you mean '--timeout'?"
expect 0 "$SPARKCTL" launch --help
contains "$TMP/out" "-N, --nproc-per-node N"
contains "$TMP/out" "--job-timeout SECONDS"
lacks "$TMP/out" "--timeout "
# The command's own -n after the command is still the command's.
expect 0 "$SPARKCTL" launch --no-env -q -N 1 sh -c 'printf "%s\n" "$1"' sh -n
[ "$(cat "$TMP/out")" = "[0] -n" ] || fail "launch took the command's -n"

# ---- --color on every command, NO_COLOR per no-color.org -------------------
for c in topo capture env netplan doctor launch "bench nccl" "bench link" exporter top status help version; do
  # shellcheck disable=SC2086
  expect 0 "$SPARKCTL" $c --help
  contains "$TMP/out" "--color WHEN"
done
expect 2 "$SPARKCTL" topo --root "$F/spark-1cable" --color=sometimes
contains "$TMP/err" "bad --color 'sometimes': auto, always or never"

ESC=$(printf '\033[')
doctor() { "$SPARKCTL" doctor --root "$F/spark-1cable" --nodes 2 "$@"; }
# In a terminal (a pty), with TERM set: what auto gives.
in_pty() {
  /usr/bin/python3 - "$@" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
while True:
    try:
        data = os.read(fd, 65536)
    except OSError:
        break
    if not data:
        break
    out += data
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
PY
}
has_color() { grep -qF -- "$ESC" "$1"; }

run doctor --color=always
has_color "$TMP/out" || fail "--color=always: no colour into a file"
run env NO_COLOR=1 "$SPARKCTL" doctor --root "$F/spark-1cable" --nodes 2 --color=always
has_color "$TMP/out" || fail "--color=always did not override NO_COLOR"
run doctor
! has_color "$TMP/out" || fail "auto coloured a file"
run doctor --color=auto
! has_color "$TMP/out" || fail "--color=auto coloured a file"

in_pty env TERM=xterm NO_COLOR= "$SPARKCTL" doctor --root "$F/spark-1cable" --nodes 2 > "$TMP/tty"
has_color "$TMP/tty" || fail "auto on a terminal with NO_COLOR empty: no colour"
in_pty env TERM=xterm NO_COLOR=1 "$SPARKCTL" doctor --root "$F/spark-1cable" --nodes 2 > "$TMP/tty"
grep -q "limits.memlock" "$TMP/tty" || fail "no report in the pty"
! has_color "$TMP/tty" || fail "NO_COLOR=1 on a terminal: coloured"
in_pty env TERM=dumb "$SPARKCTL" doctor --root "$F/spark-1cable" --nodes 2 > "$TMP/tty"
! has_color "$TMP/tty" || fail "TERM=dumb: coloured"
in_pty env TERM=xterm "$SPARKCTL" doctor --root "$F/spark-1cable" --nodes 2 --color=never > "$TMP/tty"
! has_color "$TMP/tty" || fail "--color=never on a terminal: coloured"

# ---- --root and --from wherever a node is read ------------------------------
"$SPARKCTL" topo --root "$F/spark-ring" --json > "$TMP/ring.json"
expect 0 "$SPARKCTL" status --root "$F/spark-ring"
cp "$TMP/out" "$TMP/status-root"
contains "$TMP/out" "spark-01"
contains "$TMP/out" "4 up, 200G, MTU 9000"
expect 0 "$SPARKCTL" status --from "$TMP/ring.json"
same "$TMP/status-root" "$TMP/out"
expect 0 "$SPARKCTL" status --from "$TMP/ring.json" --json
json_get "$TMP/out" 'd["nodes"][0]["status"]["doctor"]' | grep -qx None || fail "a saved node has no doctor result"
[ "$(json_get "$TMP/out" 'd["nodes"][0]["status"]["gpus"][0]["name"]')" = "NVIDIA GB10" ] ||
  fail "status --from lost the GPU"
expect 2 "$SPARKCTL" status --root "$F/spark-ring" -H node0
contains "$TMP/err" "--root and --from show this node"
expect 2 "$SPARKCTL" status --root "$F/spark-ring" --from "$TMP/ring.json"
expect 1 "$SPARKCTL" status --from "$TMP/nosuch.json"

# top and exporter read counters, which an inventory lacks: refused, saying why.
expect 2 "$SPARKCTL" top --once --from "$TMP/ring.json"
contains "$TMP/err" "--from: a saved inventory holds no counters"
expect 2 "$SPARKCTL" exporter --once --from "$TMP/ring.json"
contains "$TMP/err" "--from: a saved inventory holds no counters"

# ---- --json everywhere JSON is printed ---------------------------------------
expect 0 "$SPARKCTL" env --root "$F/spark-1cable" --json
cp "$TMP/out" "$TMP/env-json"
expect 0 "$SPARKCTL" env --root "$F/spark-1cable" --format json
same "$TMP/env-json" "$TMP/out"
expect 2 "$SPARKCTL" env --root "$F/spark-1cable" --json --format sh
