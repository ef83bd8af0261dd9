#!/usr/bin/env bash
# 'sparkctl agent hold', the start of a one-shot server for 'sparkctl bench
# link', here on loopback without SSH: the command's status and output, its
# session, descriptors and stdin; --ready-port with a real iperf3 server,
# with a command that never listens, one that exits first, and a port that
# is taken already; the end of the hold's stdin, SIGTERM, SIGKILL after the
# grace, the agent's own death (nothing of the command outlives any of
# them); usage errors, and commands that cannot run.
. "$SRCDIR/tests/lib.sh"
command -v iperf3 > /dev/null 2>&1 || fail "iperf3 is needed (apt-get install iperf3)"
# The Python interpreter itself, resolved once (a wrapper in PATH is slow, and its pid is not the listener's).
PYTHON=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 is needed"
cd "$TMP"

# ---- helpers ---------------------------------------------------------------

MARK_BASE=7
. "$SRCDIR/tests/launch/lib-procs.sh"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The hold's stdin is a FIFO whose only writer is this shell's fd 8 (the
# caller's SSH channel): open_input before a hold, close_input for its end.
fifos=0
open_input() {
  fifos=$((fifos + 1))
  IN=$TMP/in.$fifos
  mkfifo "$IN"
  exec 8<> "$IN"
}
close_input() { exec 8>&-; }
# hold ARGS...: run 'sparkctl agent hold ARGS' to its end, its stdin open
# all along (bounded by timeout: 137 means it hung).
hold() {
  open_input
  run timeout -s KILL 20 "$SPARKCTL" agent hold "$@" < "$IN" 8>&-
  close_input
}
# hold_bg ARGS...: start it in the background (pid in hold_pid, output in
# $TMP/hold.out and $TMP/hold.err); stdin open until close_input.
hold_bg() {
  open_input
  "$SPARKCTL" agent hold "$@" < "$IN" > "$TMP/hold.out" 2> "$TMP/hold.err" 8>&- &
  hold_pid=$!
  BG="$BG $hold_pid"
}
state_of() { sed 's/.*) //' "/proc/$1/stat" 2> /dev/null | cut -c1; }
ended() { [ ! -e "/proc/$1" ] || [ "$(state_of "$1")" = Z ] || [ -z "$(state_of "$1")" ]; }
# hold_wait SECONDS: wait for the background hold to end; status in $status,
# how long it took after hold_since in $took (ms).
hold_wait() {
  wait_for "$1" "the hold (pid $hold_pid) to end" ended "$hold_pid"
  took=$(($(now_ms) - hold_since))
  set +e
  wait "$hold_pid"
  status=$?
  set -e
  BG=${BG/ $hold_pid/}
  close_input
  cp "$TMP/hold.out" "$TMP/out"
  cp "$TMP/hold.err" "$TMP/err"
  no_sanitizer "$TMP/err"
}
free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- usage errors: exit 2, one line on stderr, nothing run -----------------

usage_error() {
  local text=$1
  shift
  rm -f "$TMP/ran"
  run "$SPARKCTL" agent hold "$@"
  [ "$status" = 2 ] || { show; fail "hold $*: exit $status, expected 2"; }
  [ "$(wc -l < "$TMP/err")" = 1 ] || { show; fail "hold $*: not a one-line message"; }
  contains "$TMP/err" "sparkctl agent: hold: $text"
  [ ! -s "$TMP/out" ] || { show; fail "hold $*: wrote to stdout"; }
  [ ! -e "$TMP/ran" ] || fail "hold $*: ran the command"
}
RAN=(touch "$TMP/ran")
usage_error "no '--' before the command"
usage_error "unknown option 'touch'" "${RAN[@]}"
usage_error "no command after '--'" --
usage_error "no command after '--'" --ready-port 5201 --
usage_error "bad --ready-port '0'" --ready-port 0 -- "${RAN[@]}"
usage_error "bad --ready-port '65536'" --ready-port 65536 -- "${RAN[@]}"
usage_error "bad --ready-port 'x'" --ready-port=x -- "${RAN[@]}"
usage_error "--ready-port needs a value" --ready-port
usage_error "bad --ready-timeout '-1'" --ready-port 5201 --ready-timeout -1 -- "${RAN[@]}"
usage_error "--ready-timeout needs --ready-port" --ready-timeout 5 -- "${RAN[@]}"
usage_error "unknown option '--bogus'" --bogus -- "${RAN[@]}"

# ---- the command's status, output, session, descriptors --------------------

hold -- sh -c 'echo hi; echo oops >&2; exit 3'
want 3
[ "$(cat "$TMP/out")" = hi ] || { show; fail "stdout is not the command's"; }
[ "$(cat "$TMP/err")" = oops ] || { show; fail "stderr is not the command's"; }
hold -- sh -c 'kill -KILL $$'
want 137
# Its own session, stdin from /dev/null, and only 0-2 (not the caller's fd 9).
# shellcheck disable=SC2016
hold -- sh -c 'echo "$$ $(cut -d" " -f6 /proc/$$/stat)"; readlink /proc/$$/fd/0; ls /proc/$$/fd' 9> "$TMP/fd9"
want 0
mapfile -t lines < "$TMP/out"
read -r pid sid <<< "${lines[0]}"
[ "$pid" = "$sid" ] || { show; fail "the command does not lead a session of its own"; }
[ "${lines[1]}" = /dev/null ] || { show; fail "the command's stdin is not /dev/null"; }
[ "${lines[*]:2}" = "0 1 2" ] || { show; fail "the command got descriptors other than 0-2"; }
# Exits: what is left of its session is ended first.
new_mark
hold -- sh -c "sleep $M & exit 5"
want 5
none_left "$M" "by a command that exited"

# ---- commands that cannot run ----------------------------------------------

hold -- no-such-command-xyz arg
want 127
contains "$TMP/err" "sparkctl agent: cannot run 'no-such-command-xyz': not found in PATH"
hold -- "$TMP/nowhere/cmd"
want 127
printf 'echo no\n' > "$TMP/noexec"
hold -- "$TMP/noexec"
want 126
contains "$TMP/err" "cannot run '$TMP/noexec': Permission denied"

# ---- the end of stdin, signals, the agent's death --------------------------

# The caller's channel closes: the command, its child and its grandchild end.
new_mark
hold_bg -- sh -c "sleep $M & sleep $M"
wait_for 5 "the command to start" sleeping "$M" 2
hold_since=$(now_ms)
close_input
hold_wait 5
want 143
[ "$took" -lt 3000 ] || fail "the hold took ${took} ms to end after its stdin closed"
none_left "$M" "after the end of stdin"

# SIGTERM to the agent: the command gets SIGTERM first (its trap runs), then nothing is left.
new_mark
hold_bg -- sh -c "trap 'echo TERM > \"\$0\"; exit 0' TERM; sleep $M & sleep $M & wait" "$TMP/termed"
wait_for 5 "the command to start" sleeping "$M" 2
hold_since=$(now_ms)
kill -TERM "$hold_pid"
hold_wait 5
want 143
[ "$(cat "$TMP/termed" 2> /dev/null)" = TERM ] || fail "the command did not get SIGTERM"
none_left "$M" "after SIGTERM to the agent"

# A command that ignores SIGTERM gets SIGKILL after 2 s.
new_mark
hold_bg -- sh -c "trap '' TERM; sleep $M & sleep $M"
wait_for 5 "the command to start" sleeping "$M" 2
hold_since=$(now_ms)
kill -HUP "$hold_pid"
hold_wait 8
want 143
[ "$took" -ge 1900 ] || fail "SIGKILL came after ${took} ms, not after the 2 s grace"
none_left "$M" "by a command that ignores SIGTERM"

# The agent killed outright: the command dies with it (PR_SET_PDEATHSIG).
new_mark
hold_bg -- sleep "$M"
wait_for 5 "the command to start" sleeping "$M" 1
kill -KILL "$hold_pid"
hold_since=$(now_ms)
hold_wait 5
wait_for 5 "the command to die with the agent" gone "$M"

# ---- --ready-port ------------------------------------------------------------

# A real one-shot server: "ready" before the client starts, then the server's status.
port=$(free_port)
hold_bg --ready-port "$port" -- iperf3 -s -1 -p "$port"
wait_for 10 "'ready' from the hold" grep -qx ready "$TMP/hold.out"
ended "$hold_pid" && fail "the hold ended before the client ran"
run timeout -s KILL 20 iperf3 -c 127.0.0.1 -p "$port" -t 1 -J
want 0
cp "$TMP/out" "$TMP/client.json"
[ "$(json_get "$TMP/client.json" 'd["end"]["sum_received"]["bytes"] > 0')" = True ] \
  || fail "the iperf3 client received nothing"
hold_since=$(now_ms)
hold_wait 10
want 0
[ "$(grep -cx ready "$TMP/out")" = 1 ] || { show; fail "not one 'ready' line"; }
pgrep -f -- "iperf3 -s -1 -p $port\$" && fail "the iperf3 server is still there"

# Nothing listens: exit 3 after --ready-timeout, the command ended.
new_mark
port=$(free_port)
hold --ready-port "$port" --ready-timeout 500 -- sleep "$M"
want 3
contains "$TMP/err" "sparkctl agent: nothing listened on port $port within 0.5 s"
lacks "$TMP/out" ready
none_left "$M" "after the ready timeout"

# The command exits before it listens.
hold --ready-port "$port" -- sh -c 'exit 4'
want 3
contains "$TMP/err" "sparkctl agent: 'sh' exited with status 4 before listening on port $port"
lacks "$TMP/out" ready

# A port taken before the command starts: refused at once, naming the holder.
"$PYTHON" -c '
import socket, time
try:  # IPv6 where this host has it (the hold reads both tables), else IPv4
    s = socket.socket(socket.AF_INET6)
    s.bind(("::1", 0))
except OSError:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(60)' > "$TMP/listener.port" &
listener=$!
at_exit "kill -KILL $listener 2> /dev/null"
wait_for 10 "the listener" test -s "$TMP/listener.port"
port=$(cat "$TMP/listener.port")
new_mark
hold --ready-port "$port" -- sleep "$M"
want 3
contains "$TMP/err" "sparkctl agent: port $port is in use by pid $listener ("
[ "$(wc -l < "$TMP/err")" = 1 ] || { show; fail "not a one-line message"; }
none_left "$M" "with a taken port (the command ran)"

# --self: the command is this program's own (storage bench -H runs each
# node's bench so); its output and status pass through.
hold --self -- version
want 0
grep -q "^sparkctl [0-9]" "$TMP/out" || { show; fail "--self did not run sparkctl version"; }
hold --self -- version --no-such-option
want 2
contains "$TMP/err" "sparkctl version: unknown option '--no-such-option'"
