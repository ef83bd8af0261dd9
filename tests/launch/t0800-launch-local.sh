#!/usr/bin/env bash
# 'sparkctl launch' on this host alone: usage errors, the ranks' environment
# and arguments, their output and logs, exit statuses, teardown (nothing of
# a job outlives it), signals to the launcher, --job-timeout, --stall, --port
# and --kill-stale, --chdir, --torchrun, and two nodes that are both this host.
. "$SRCDIR/tests/lib.sh"
env --default-signal=INT true 2> /dev/null \
  || skip "env --default-signal is needed (coreutils 8.31 or later)"
# The Python interpreter itself, resolved once (a wrapper in PATH can take a second a call).
PYTHON=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 is needed"

# What the caller's environment could add to the ranks' is the test's to set.
unset SPARKCTL_ROOT PYTHONUNBUFFERED NCCL_IB_HCA UNSET_VAR_XYZ RANK TR_ARGV
mkdir "$TMP/wd" "$TMP/other" "$TMP/bin" "$TMP/r"
cd "$TMP/wd"
WD=$(pwd -P)

# ---- helpers ---------------------------------------------------------------

MARK_BASE=6
. "$SRCDIR/tests/launch/lib-procs.sh"

# launch ARGS...: sparkctl launch, killed after a minute if it hangs (a bound
# against hangs, not a timing check: it then exits 137, which no check expects).
launch() { timeout -s KILL 60 "$SPARKCTL" launch "$@"; }
# bg CMD...: start CMD in the background with SIGINT at its default (a
# non-interactive shell ignores it for '&'); pid in bg_pid, output in
# $TMP/bg.out and $TMP/bg.err.
bg() {
  env --default-signal=INT "$@" > "$TMP/bg.out" 2> "$TMP/bg.err" &
  bg_pid=$!
  BG="$BG $bg_pid"
}
state_of() { sed 's/.*) //' "/proc/$1/stat" 2> /dev/null | cut -c1; }
ended() { [ ! -e "/proc/$1" ] || [ "$(state_of "$1")" = Z ] || [ -z "$(state_of "$1")" ]; }
# bg_wait SECONDS: wait for it to end (failing after SECONDS); its status in $status.
bg_wait() {
  wait_for "$1" "the launcher (pid $bg_pid) to end" ended "$bg_pid"
  set +e
  wait "$bg_pid"
  status=$?
  set -e
  BG=${BG/ $bg_pid/}
  no_sanitizer "$TMP/bg.err"
}
# up N: the ranks that run 'touch $TMP/r/up.$RANK' have done so (N of them).
up() { [ "$(find "$TMP/r" -name 'up.*' | wc -l)" -ge "$1" ]; }
reset_r() { rm -f "$TMP"/r/*; }

# ---- usage errors ----------------------------------------------------------

# usage_error TEXT ARGS...: exit 2, a one-line message holding TEXT (then the
# --help hint), nothing on stdout, and nothing run.
usage_error() {
  local text=$1 lines
  shift
  rm -f "$TMP/ran"
  run launch "$@"
  mapfile -t lines < "$TMP/err"
  [ "$status" = 2 ] || { show; fail "launch $*: exit $status, expected 2"; }
  [[ ${lines[0]-} == "sparkctl launch: "*"$text"* ]] || { show; fail "launch $*: no message with '$text'"; }
  [ "${#lines[@]}" = 1 ] || { [ "${#lines[@]}" = 2 ] && [ "${lines[1]}" = "Try 'sparkctl launch --help'." ]; } \
    || { show; fail "launch $*: more than a one-line message (and the --help hint)"; }
  [ ! -s "$TMP/out" ] || { show; fail "launch $*: wrote to stdout"; }
  [ ! -e "$TMP/ran" ] || fail "launch $*: ran the command"
}
RAN=(touch "$TMP/ran")
usage_error "no command"
usage_error "no command" --no-env
usage_error "-bad" -H -bad -- "${RAN[@]}"
usage_error "--env takes NAME=VALUE" --env FOO -- "${RAN[@]}"
usage_error "RANK is set by sparkctl launch itself" --env RANK=1 -- "${RAN[@]}"
usage_error "MASTER_PORT" -x MASTER_PORT=1 -- "${RAN[@]}"
usage_error "UNSET_VAR_XYZ" -x UNSET_VAR_XYZ -- "${RAN[@]}"
usage_error "--port 70000" --port 70000 -- "${RAN[@]}"
usage_error "--kill-stale" --kill-stale -- "${RAN[@]}"
usage_error "-H and --hostfile" -H a --hostfile f -- "${RAN[@]}"
# A hostfile that cannot be used is a bad argument (2), never a rank's status.
head -c 2000000 /dev/zero | tr '\0' 'a' > "$TMP/big-hostfile"
usage_error "$TMP/no-such-hostfile" --hostfile "$TMP/no-such-hostfile" -- "${RAN[@]}"
usage_error "$TMP/other" --hostfile "$TMP/other" -- "${RAN[@]}"
usage_error "$TMP/big-hostfile" --hostfile "$TMP/big-hostfile" -- "${RAN[@]}"
usage_error "--chdir" --chdir relative -- "${RAN[@]}"
usage_error "unknown option '--bogus'" --bogus -- "${RAN[@]}"
usage_error "empty" -- ''
usage_error "--torchrun-opt" --torchrun-opt=--max_restarts=0 -- "${RAN[@]}"
usage_error "--torchrun-opt 'x'" --torchrun --torchrun-opt=x -- "${RAN[@]}"

# ---- the ranks' environment ------------------------------------------------

export CALLER_VAR='from the caller'
run launch --no-env -N 3 --env FOO=bar -x CALLER_VAR -x NAMED='a value' \
  -- sh -c 'env > "$0/env.$RANK"; pwd -P > "$0/pwd.$RANK"' "$TMP/r"
want 0
contains "$TMP/err" "sparkctl launch: 3 ranks ended with status 0"
# load_env RANK...: what each rank saw, from $TMP/r/env.RANK, into E[RANK.NAME].
declare -A E
load_env() {
  local r line
  E=()
  for r; do
    [ -f "$TMP/r/env.$r" ] || fail "rank $r did not run"
    while IFS= read -r line; do
      [[ $line == *=* ]] && E[$r.${line%%=*}]=${line#*=}
    done < "$TMP/r/env.$r"
  done
}
load_env 0 1 2
port=${E[0.MASTER_PORT]-}
job=${E[0.SPARKCTL_JOB_ID]-}
[[ $port =~ ^[1-9][0-9]*$ ]] && [ "$port" -le 65535 ] || fail "MASTER_PORT '$port' is not a port"
[[ $job =~ ^[0-9a-f]{16}$ ]] || fail "SPARKCTL_JOB_ID '$job' is not 16 hex digits"
for r in 0 1 2; do
  for kv in RANK=$r LOCAL_RANK=$r WORLD_SIZE=3 LOCAL_WORLD_SIZE=3 NODE_RANK=0 GROUP_RANK=0 \
    MASTER_ADDR=127.0.0.1 "MASTER_PORT=$port" "SPARKCTL_JOB_ID=$job" SPARKCTL_JOB_NODE=0 PYTHONUNBUFFERED=1 \
    FOO=bar "CALLER_VAR=from the caller" "NAMED=a value" GROUP_WORLD_SIZE=1 ROLE_RANK=$r ROLE_NAME=default \
    ROLE_WORLD_SIZE=3 TORCHELASTIC_RESTART_COUNT=0 TORCHELASTIC_MAX_RESTARTS=0 "TORCHELASTIC_RUN_ID=$job" \
    TORCHELASTIC_USE_AGENT_STORE=False OMP_NUM_THREADS=1; do
    [ "${E[$r.${kv%%=*}]-(unset)}" = "${kv#*=}" ] \
      || fail "rank $r: ${kv%%=*}='${E[$r.${kv%%=*}]-(unset)}', expected '${kv#*=}'"
  done
  [ "$(< "$TMP/r/pwd.$r")" = "$WD" ] || fail "rank $r ran in $(< "$TMP/r/pwd.$r"), not $WD"
done
# A second job has a job id and a port of its own; --chdir; PYTHONUNBUFFERED as the caller set it.
reset_r
run launch --no-env --chdir "$TMP/other" --env PYTHONUNBUFFERED=0 \
  -- sh -c 'env > "$0/env.$RANK"; pwd -P > "$0/pwd.$RANK"' "$TMP/r"
want 0
load_env 0
[ "$(< "$TMP/r/pwd.0")" = "$(cd "$TMP/other" && pwd -P)" ] || fail "--chdir: ran in $(< "$TMP/r/pwd.0")"
[ "${E[0.PYTHONUNBUFFERED]-}" = 0 ] || fail "PYTHONUNBUFFERED=0 was overridden"
[ "${E[0.SPARKCTL_JOB_ID]-}" != "$job" ] || fail "two jobs had the same job id"
[ "${E[0.WORLD_SIZE]-}" = 1 ] || fail "one rank by default"

# The node's 'sparkctl env' (from a fixture tree): added, below --env, and not with --no-env.
reset_r
ENVCMD=(sh -c 'env > "$0/env.$RANK"' "$TMP/r")
SPARKCTL_ROOT=$FIXTURES/spark-1cable run launch -q -- "${ENVCMD[@]}"
want 0
[ ! -s "$TMP/err" ] || { show; fail "a warning with a fabric"; }
load_env 0
[ "${E[0.NCCL_IB_HCA]-}" = "=rocep1s0f1,roceP2p1s0f1" ] || fail "the node's env is missing: NCCL_IB_HCA='${E[0.NCCL_IB_HCA]-}'"
SPARKCTL_ROOT=$FIXTURES/spark-1cable run launch -q --env NCCL_IB_HCA=mine -- "${ENVCMD[@]}"
want 0
load_env 0
[ "${E[0.NCCL_IB_HCA]-}" = mine ] || fail "--env does not win over the node's env"
SPARKCTL_ROOT=$FIXTURES/spark-1cable run launch -q --no-env -- "${ENVCMD[@]}"
want 0
load_env 0
[ -z "${E[0.NCCL_IB_HCA]-}" ] || fail "--no-env still added the node's env"
# Without a fabric for 'sparkctl env': one line of warning, and the job runs;
# with -q no warning at all (only errors).
warned_once() {
  want 0
  contains "$TMP/out" "[0] ran"
  [ "$(grep -c '^sparkctl launch: localhost: ' "$TMP/err")" = 1 ] || { show; fail "not one line of warning"; }
}
quiet_run() {
  want 0
  contains "$TMP/out" "[0] ran"
  [ ! -s "$TMP/err" ] || { show; fail "launch -q printed a warning"; }
}
SPARKCTL_ROOT=$FIXTURES/spark-2cable run launch -- echo ran
warned_once
SPARKCTL_ROOT=$FIXTURES/spark-2cable run launch -q -- echo ran
quiet_run
# This host as it is: no RDMA here means the warning.
if "$SPARKCTL" env > /dev/null 2>&1; then
  note "this host has a fabric for 'sparkctl env': no warning expected"
  run launch -- echo ran
  want 0
  lacks "$TMP/err" "sparkctl launch: localhost: "
else
  run launch -- echo ran
  warned_once
fi
run launch -q -- echo ran
quiet_run

# ---- arguments, byte for byte ----------------------------------------------

args=("two words" "it's" 'say "hi"' '$HOME' '`id`' ';' '|&<>*?' $'line one\nline two' $'a\ttab'
  'back\slash\\' 'héllo ☃ 日本' $'\xff' $'\x01\x1f\x7f' '' '-n' '--tag-output' '--' '%41' '%' '100%%' '%zz')
printf '%s\0' "${args[@]}" > "$TMP/args.want"
run launch --no-env -q -- sh -c 'printf "%s\0" "$@" > "$0/args.got"' "$TMP" "${args[@]}"
want 0
cmp "$TMP/args.want" "$TMP/args.got" || fail "the arguments changed on the way"

# ---- output ----------------------------------------------------------------

run launch --no-env -q -N 2 -- sh -c 'echo "out $RANK"; echo "err $RANK" >&2'
want 0
[ "$(sort "$TMP/out")" = "$(printf '[0] out 0\n[1] out 1')" ] || { show; fail "stdout lines"; }
[ "$(sort "$TMP/err")" = "$(printf '[0] err 0\n[1] err 1')" ] || { show; fail "stderr lines"; }
run launch --no-env -q -N 2 --tag-output -- sh -c 'echo "out $RANK"; echo "err $RANK" >&2'
want 0
[ "$(sort "$TMP/out")" = "$(printf '[localhost:0] out 0\n[localhost:1] out 1')" ] || { show; fail "--tag-output stdout"; }
[ "$(sort "$TMP/err")" = "$(printf '[localhost:0] err 0\n[localhost:1] err 1')" ] || { show; fail "--tag-output stderr"; }
# Empty lines stay; a last line without a newline is still a line.
run launch --no-env -q -- sh -c 'printf "\n\nfirst\nno newline"; printf "e1\ne2 no newline" >&2'
want 0
printf '[0] \n[0] \n[0] first\n[0] no newline\n' > "$TMP/expect"
same "$TMP/expect" "$TMP/out"
printf '[0] e1\n[0] e2 no newline\n' > "$TMP/expect"
same "$TMP/expect" "$TMP/err"

# The bytes of a line come out as written: NUL, CR, escapes, invalid UTF-8.
{ printf 'x'; head -c 256 /dev/zero | tr '\0' '\n' | "$PYTHON" -c '
import sys; sys.stdout.buffer.write(bytes(b for b in range(256) if b != 10))'; echo; } > "$TMP/bytes.line"
run launch --no-env -q -- cat "$TMP/bytes.line"
want 0
{ printf '[0] '; cat "$TMP/bytes.line"; } > "$TMP/expect"
cmp "$TMP/expect" "$TMP/out" || fail "the bytes of a line changed on the way"

# Many lines from several ranks, written in blocks that split lines: all arrive, none mixed.
pad=$(head -c 150 /dev/zero | tr '\0' p)
run launch --no-env -q -N 4 -- sh -c \
  'seq 0 1999 | sed "s/.*/line $RANK & $0/"; seq 0 1999 | sed "s/.*/eline $RANK & $0/" >&2' "$pad"
want 0
for r in 0 1 2 3; do
  [ "$(grep -c "^\[$r\] line $r [0-9]* $pad\$" "$TMP/out")" = 2000 ] || fail "rank $r: not 2000 whole stdout lines"
  [ "$(grep -c "^\[$r\] eline $r [0-9]* $pad\$" "$TMP/err")" = 2000 ] || fail "rank $r: not 2000 whole stderr lines"
  [ "$(grep "^\[$r\] " "$TMP/out" | cut -d' ' -f4 | tr '\n' ' ')" = "$(seq 0 1999 | tr '\n' ' ')" ] \
    || fail "rank $r: stdout lines out of order"
done
[ "$(wc -l < "$TMP/out")" = 8000 ] && [ "$(wc -l < "$TMP/err")" = 8000 ] || fail "lines beyond the ranks' own"

# ---- --log-dir -------------------------------------------------------------

run launch --no-env -N 2 --log-dir "$TMP/logs" -- sh -c 'echo "out $RANK a"; echo "err $RANK" >&2; printf "out $RANK b"'
want 0
for r in 0 1; do
  [ "$(sort "$TMP/logs/rank-$r.log")" = "$(printf 'err %s\nout %s a\nout %s b' $r $r $r)" ] \
    || { cat "$TMP/logs/rank-$r.log" >&2; fail "rank-$r.log"; }
done
[ "$(ls "$TMP/logs" | tr '\n' ' ')" = "rank-0.log rank-1.log summary.json " ] || fail "log dir: $(ls "$TMP/logs")"
json_valid launch-summary "$TMP/logs/summary.json"
"$PYTHON" - "$TMP/logs/summary.json" <<'PY' || fail "summary.json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "ok" and d["exit_status"] == 0, d
assert [u["rank"] for u in d["units"]] == [0, 1], d["units"]
assert all(u["exit_status"] == 0 and u["signal"] is None and u["started"] for u in d["units"]), d["units"]
PY

# ---- exit statuses ---------------------------------------------------------

# Rank 1 of 3 fails while the others sleep: its status, and the others are ended.
new_mark
run launch --no-env -N 3 --log-dir "$TMP/logs2" \
  -- sh -c 'if [ "$RANK" = 1 ]; then exit 3; fi; exec sleep "$0"' "$M"
want 3
contains "$TMP/err" "rank 1 on localhost ended with exit 3"
grep -qE '^ +1 +localhost +exit 3 .*first to fail *$' "$TMP/err" || { show; fail "rank 1 is not 'first to fail'"; }
for r in 0 2; do
  grep -qE "^ +$r +localhost +.*ended by sparkctl *\$" "$TMP/err" || { show; fail "rank $r is not 'ended by sparkctl'"; }
done
none_left "$M" "after a failed rank"
json_valid launch-summary "$TMP/logs2/summary.json"
"$PYTHON" - "$TMP/logs2/summary.json" <<'PY' || fail "summary.json of a failed job"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "failed" and d["exit_status"] == 3, d
u = d["units"]
assert u[1]["exit_status"] == 3 and not u[1]["ended_by_launch"], u[1]
assert all(u[r]["ended_by_launch"] and u[r]["signal"] == 15 for r in (0, 2)), u
PY
# The same with --color=always: the status cells coloured (red: the rank
# that failed; yellow: those sparkctl ended), the columns as without colour.
new_mark
cp "$TMP/err" "$TMP/plain.err"
run launch --no-env -N 3 --color=always \
  -- sh -c 'if [ "$RANK" = 1 ]; then exit 3; fi; exec sleep "$0"' "$M"
want 3
grep -qF "$(printf '\033[1;31mexit 3\033[0m')" "$TMP/err" || { show; fail "the failed rank's status is not red"; }
[ "$(grep -cF "$(printf '\033[1;33msignal 15')" "$TMP/err")" = 2 ] || { show; fail "the ended ranks' status is not yellow"; }
sed 's/\x1b\[[0-9;]*m//g' "$TMP/err" | grep -E '^ +[0-9]+ +localhost ' | sed 's/[0-9.]* s /N s /' > "$TMP/stripped"
grep -E '^ +[0-9]+ +localhost ' "$TMP/plain.err" | sed 's/[0-9.]* s /N s /' > "$TMP/plain.rows"
same "$TMP/plain.rows" "$TMP/stripped"
none_left "$M" "after a failed rank, in colour"
# Killed by a signal: 128+N.
run launch --no-env -- sh -c 'kill -9 $$'
want 137
contains "$TMP/err" "signal 9 (SIGKILL)"
# A command that does not exist.
run launch --no-env -- no-such-command-$$
want 127
contains "$TMP/err" "no-such-command-$$"
# -q: no summary; a failure still gets its one line.
run launch --no-env -q -N 2 -- true
want 0
[ ! -s "$TMP/err" ] || { show; fail "-q still printed"; }
run launch --no-env -q -- sh -c 'exit 4'
want 4
[ "$(wc -l < "$TMP/err")" = 1 ] || { show; fail "-q: not one line for a failure"; }
contains "$TMP/err" "rank 0 on localhost ended with exit 4"

# A rank's stdin is /dev/null (docs/launch.md): what the launcher is given never reaches it.
set +e
echo "typed at the launcher" | launch --no-env -- sh -c 'cat; echo "read: done"' > "$TMP/out" 2> "$TMP/err"
status=$?
set -e
want 0
[ "$(cat "$TMP/out")" = "[0] read: done" ] || { show; fail "a rank read the launcher's stdin"; }

# ---- teardown: nothing of a job outlives it --------------------------------

# A rank that leaves a sleeper behind in a session of its own, and one that
# double-forks with an empty environment: gone when the launch returns.
new_mark
run launch --no-env -- sh -c 'setsid sleep "$0" > /dev/null 2>&1 < /dev/null & echo started' "$M"
want 0
contains "$TMP/out" "[0] started"
none_left "$M" "by a rank that exited 0 (setsid)"
new_mark
run launch --no-env -- sh -c '(setsid env -i sleep "$0" &); echo started' "$M"
want 0
none_left "$M" "by a rank that exited 0 (double fork, no environment)"

# A rank that ignores SIGTERM, another rank failing, --grace 1: it still ends.
new_mark
reset_r
run launch --no-env --grace 1 -N 2 -- sh -c '
  if [ "$RANK" = 0 ]; then trap "" TERM; touch "$1/up.0"; exec sleep "$0"; fi
  while [ ! -e "$1/up.0" ]; do sleep 0.05; done; exit 3' "$M" "$TMP/r"
want 3
none_left "$M" "by a rank that ignores SIGTERM"

SIGCMD=(sh -c 'touch "$1/up.$RANK"; exec sleep "$0"')
SIGCMD_TRAP=(sh -c 'trap "" TERM; touch "$1/up.$RANK"; exec sleep "$0"')
# SIGTERM to the launcher: 143.
new_mark
reset_r
bg "$SPARKCTL" launch --no-env -N 2 -- "${SIGCMD[@]}" "$M" "$TMP/r"
wait_for 30 "the ranks to start" up 2
kill -TERM "$bg_pid"
bg_wait 30
[ "$status" = 143 ] || { cat "$TMP/bg.err" >&2; fail "SIGTERM: exit $status, expected 143"; }
contains "$TMP/bg.err" "the job was ended by SIGTERM"
none_left "$M" "after SIGTERM to the launcher"
# SIGINT: 130.
new_mark
reset_r
bg "$SPARKCTL" launch --no-env -N 2 -- "${SIGCMD[@]}" "$M" "$TMP/r"
wait_for 30 "the ranks to start" up 2
kill -INT "$bg_pid"
bg_wait 30
[ "$status" = 130 ] || { cat "$TMP/bg.err" >&2; fail "SIGINT: exit $status, expected 130"; }
contains "$TMP/bg.err" "the job was ended by SIGINT"
none_left "$M" "after SIGINT to the launcher"
# SIGHUP: 129.
new_mark
reset_r
bg "$SPARKCTL" launch --no-env -- "${SIGCMD[@]}" "$M" "$TMP/r"
wait_for 30 "the ranks to start" up 1
kill -HUP "$bg_pid"
bg_wait 30
[ "$status" = 129 ] || { cat "$TMP/bg.err" >&2; fail "SIGHUP: exit $status, expected 129"; }
none_left "$M" "after SIGHUP to the launcher"
# A second SIGINT kills at once: ranks that ignore SIGTERM, a grace of 30 s,
# and the launch ends well before the grace would.
new_mark
reset_r
bg "$SPARKCTL" launch --no-env --grace 30 -N 2 -- "${SIGCMD_TRAP[@]}" "$M" "$TMP/r"
wait_for 30 "the ranks to start" up 2
kill -INT "$bg_pid"
wait_for 20 "the first SIGINT to be seen" grep -q "SIGINT: ending the job" "$TMP/bg.err"
kill -INT "$bg_pid"
bg_wait 20
[ "$status" = 130 ] || { cat "$TMP/bg.err" >&2; fail "two SIGINTs: exit $status, expected 130"; }
contains "$TMP/bg.err" "killing the job"
none_left "$M" "after two SIGINTs"
# SIGKILL to the launcher: its agent sees its input close and ends the job.
new_mark
reset_r
bg "$SPARKCTL" launch --no-env -N 2 -- "${SIGCMD_TRAP[@]}" "$M" "$TMP/r"
wait_for 30 "the ranks to start" up 2
agent=$(pgrep -P "$bg_pid") || fail "the launcher has no agent"
kill -KILL "$bg_pid"
bg_wait 10
[ "$status" = 137 ] || fail "SIGKILL: exit $status"
wait_for 10 "the ranks of a killed launcher to go" gone "$M"
wait_for 10 "the agent of a killed launcher to go" ended "$agent"

# ---- --job-timeout and --stall -------------------------------------------------

new_mark
run launch --no-env --job-timeout 2 -- sleep "$M"
want 5
contains "$TMP/err" "--job-timeout 2 s reached"
contains "$TMP/err" "the job was ended by --job-timeout"
none_left "$M" "after --job-timeout"
# --stall only advises.
run launch --no-env --stall 1 -- sleep 3
want 0
contains "$TMP/err" "no output for 1 s"
contains "$TMP/err" "    sparkctl doctor -H localhost"

# ---- --port ----------------------------------------------------------------

# A listener that holds some memory: a process that is ending lets go of its
# environment (what --kill-stale finds a job by) a while before its sockets.
cat > "$TMP/listen.py" << 'PY'
import os, socket, sys, time
ballast = b"x" * (64 << 20)
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
PY
# listen [VAR=VALUE]: a listener on a free port of loopback; pid in lpid, port in lport.
listen() {
  rm -f "$TMP/port"
  env "$@" "$PYTHON" "$TMP/listen.py" "$TMP/port" &
  lpid=$!
  BG="$BG $lpid"
  wait_for 30 "the listener" test -s "$TMP/port"
  lport=$(cat "$TMP/port")
}
alive() { kill -0 "$1" 2> /dev/null && [ "$(state_of "$1")" != Z ]; }
unlisten() {
  kill -TERM "$lpid" 2> /dev/null || true
  wait "$lpid" 2> /dev/null || true
  BG=${BG/ $lpid/}
}
# A port in use by another program: 3, naming it; --kill-stale does not touch it.
listen X=1
run launch --no-env --port "$lport" -- echo ran
want 3
contains "$TMP/err" "port $lport is in use by pid $lpid"
lacks "$TMP/out" "ran"
run launch --no-env --port "$lport" --kill-stale -- echo ran
want 3
contains "$TMP/err" "port $lport is in use by pid $lpid"
alive "$lpid" || fail "--kill-stale ended a program that is no sparkctl job's"
unlisten
# Held by an earlier job: named, with the way out; --kill-stale ends it and the job runs.
stale=$(printf 'abcdef%010x' "$$")
listen SPARKCTL_JOB_ID="$stale"
run launch --no-env --port "$lport" -- echo ran
want 3
contains "$TMP/err" "port $lport is in use by pid $lpid"
contains "$TMP/err" "$stale"
contains "$TMP/err" "--kill-stale"
alive "$lpid" || fail "the earlier job was ended without --kill-stale"
unlisten
# ---- --chdir that cannot be used -------------------------------------------

run launch --no-env --chdir "/nonexistent-$$" -- echo ran
want 3
contains "$TMP/err" "'/nonexistent-$$'"
lacks "$TMP/out" "ran"
touch "$TMP/afile"
run launch --no-env --chdir "$TMP/afile" -- echo ran
want 3
contains "$TMP/err" "'$TMP/afile'"

# ---- --torchrun, with a torchrun that records its arguments ----------------

cat > "$TMP/bin/torchrun" << 'SH'
#!/bin/sh
printf '%s\n' "$@" > "$TR_ARGV"
echo "RANK=${RANK-unset} NODE_RANK=$NODE_RANK GROUP_RANK=$GROUP_RANK MASTER_PORT=$MASTER_PORT"
SH
chmod +x "$TMP/bin/torchrun"
export TR_ARGV=$TMP/torchrun.argv
PATH="$TMP/bin:$PATH" run launch --no-env --torchrun -N 2 -- echo hi
want 0
tport=$(sed -n 's/^--master_port=//p' "$TR_ARGV")
[[ $tport =~ ^[1-9][0-9]*$ ]] || fail "--master_port '$tport'"
printf '%s\n' --nnodes=1 --node_rank=0 --nproc_per_node=2 --master_addr=127.0.0.1 \
  "--master_port=$tport" --no_python echo hi > "$TMP/expect"
same "$TMP/expect" "$TR_ARGV"
[ "$(cat "$TMP/out")" = "[localhost] RANK=unset NODE_RANK=0 GROUP_RANK=0 MASTER_PORT=$tport" ] \
  || { show; fail "torchrun's output or environment"; }
PATH="$TMP/bin:$PATH" run launch --no-env --torchrun -N 2 -- x.py --lr 1
want 0
tport=$(sed -n 's/^--master_port=//p' "$TR_ARGV")
printf '%s\n' --nnodes=1 --node_rank=0 --nproc_per_node=2 --master_addr=127.0.0.1 \
  "--master_port=$tport" x.py --lr 1 > "$TMP/expect"
same "$TMP/expect" "$TR_ARGV"
# --torchrun-opt: after sparkctl's options, before the command.
PATH="$TMP/bin:$PATH" run launch --no-env --torchrun --torchrun-opt=--max_restarts=0 \
  --torchrun-opt --rdzv_backend=c10d -- echo hi
want 0
tport=$(sed -n 's/^--master_port=//p' "$TR_ARGV")
printf '%s\n' --nnodes=1 --node_rank=0 --nproc_per_node=1 --master_addr=127.0.0.1 \
  "--master_port=$tport" --max_restarts=0 --rdzv_backend=c10d --no_python echo hi > "$TMP/expect"
same "$TMP/expect" "$TR_ARGV"

# The torch that torchrun's Python imports decides: before 2.0 on Python 3.11+
# torchrun's default --redirects/--tee of 0 fail, so a map for local rank 9
# comes first (the caller's options still follow).  A stand-in Python answers
# the probe with FAKE_TORCH and records the torchrun command it runs.
mkdir "$TMP/py" "$TMP/bin2"
cat > "$TMP/py/python3" << 'SH'
#!/bin/sh
if [ "$1" = -c ]; then echo "$FAKE_TORCH"; exit 0; fi
shift
printf '%s\n' "$@" > "$TR_ARGV"
SH
printf '#!%s\n' "$TMP/py/python3" > "$TMP/bin2/torchrun"
chmod +x "$TMP/py/python3" "$TMP/bin2/torchrun"
FAKE_TORCH="1.13.0a0+gitunknown 3 11" PATH="$TMP/bin2:$PATH" run launch --no-env --torchrun \
  --torchrun-opt=--max_restarts=0 -- echo hi
want 0
tport=$(sed -n 's/^--master_port=//p' "$TR_ARGV")
printf '%s\n' --nnodes=1 --node_rank=0 --nproc_per_node=1 --master_addr=127.0.0.1 \
  "--master_port=$tport" --redirects=9:1 --tee=9:1 --max_restarts=0 --no_python echo hi > "$TMP/expect"
same "$TMP/expect" "$TR_ARGV"
for fake in "2.1.0 3 11" "1.13.1 3 10" "not a version"; do
  FAKE_TORCH=$fake PATH="$TMP/bin2:$PATH" run launch --no-env --torchrun -- echo hi
  want 0
  tport=$(sed -n 's/^--master_port=//p' "$TR_ARGV")
  printf '%s\n' --nnodes=1 --node_rank=0 --nproc_per_node=1 --master_addr=127.0.0.1 \
    "--master_port=$tport" --no_python echo hi > "$TMP/expect"
  same "$TMP/expect" "$TR_ARGV"
done

# ---- two nodes that are both this host -------------------------------------

# localhost and 127.0.0.1 are two nodes without ssh: the ranks are numbered
# across them, and each node's end leaves the other's ranks alone.
reset_r
run launch --no-env -H localhost,127.0.0.1 -N 2 --tag-output -- sh -c \
  'echo "$RANK $LOCAL_RANK $NODE_RANK $GROUP_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $SPARKCTL_JOB_NODE $MASTER_PORT $SPARKCTL_JOB_ID"'
want 0
port=$(sed -n 's/^\[localhost:0\] 0 0 0 0 4 2 127\.0\.0\.1 0 \([0-9]*\) .*/\1/p' "$TMP/out")
[ -n "$port" ] || { show; fail "rank 0 of two nodes"; }
job=$(sed -n 's/^\[localhost:0\] .* //p' "$TMP/out")
printf '%s\n' "[localhost:0] 0 0 0 0 4 2 127.0.0.1 0 $port $job" "[localhost:1] 1 1 0 0 4 2 127.0.0.1 0 $port $job" \
  "[127.0.0.1:2] 2 0 1 1 4 2 127.0.0.1 1 $port $job" "[127.0.0.1:3] 3 1 1 1 4 2 127.0.0.1 1 $port $job" > "$TMP/expect"
sort -o "$TMP/expect" "$TMP/expect"
sort "$TMP/out" > "$TMP/out.sorted"
same "$TMP/expect" "$TMP/out.sorted"
# Node 1's rank ends first (with 0); node 0's rank goes on a second longer and ends with 0.
run launch --no-env -H localhost,127.0.0.1 -- sh -c '
  if [ "$NODE_RANK" = 1 ]; then touch "$0/node1.done"; exit 0; fi
  while [ ! -e "$0/node1.done" ]; do sleep 0.05; done; sleep 1; echo "rank 0 done"' "$TMP/r"
want 0
contains "$TMP/out" "[0] rank 0 done"

# Two failures, the second heard of first: node 1's rank exits 7, and node
# 0's exits 3 half a second after it is gone (reaped by its agent, which
# times the end as it reaps).  Node 1 is reached through a stand-in ssh that
# runs its agent here but holds the agent's lines for 2 s from its 'X' (a
# unit's end), so node 0's exit 3 arrives first.  The first to fail is what
# the nodes' clocks say, as its agent timed it: rank 1, whose status the
# launch exits with; rank 0 failed on its own too, not ended by sparkctl.
cat > "$TMP/ssh-late" << 'EOF2'
#!/bin/sh
case "$1" in -G | -O*) exit 1 ;; esac
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift 2
sh -c "$*" | "$PYTHON" -c '
import sys, time
held = False
while line := sys.stdin.buffer.readline():
    if line.startswith(b"X ") and not held:
        held = True
        time.sleep(2)
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
'
EOF2
chmod +x "$TMP/ssh-late"
reset_r
PYTHON=$PYTHON SPARKCTL_SSH=$TMP/ssh-late run launch --no-env -H localhost,late.invalid \
  --log-dir "$TMP/logs-late" -- sh -c '
  if [ "$NODE_RANK" = 1 ]; then echo $$ > "$0/node1.pid.new"; mv "$0/node1.pid.new" "$0/node1.pid"; exit 7; fi
  while [ ! -s "$0/node1.pid" ]; do sleep 0.01; done
  while [ -e "/proc/$(cat "$0/node1.pid")" ]; do sleep 0.01; done
  sleep 0.5; exit 3' "$TMP/r"
want 7
contains "$TMP/err" "rank 1 on late.invalid ended with exit 7; the job was ended"
grep -qE '^ +1 +late\.invalid +exit 7 .*first to fail *$' "$TMP/err" || { show; fail "rank 1 is not 'first to fail'"; }
"$PYTHON" - "$TMP/logs-late/summary.json" << 'PY' || fail "summary.json of two failures"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["outcome"] == "failed" and d["exit_status"] == 7, d
u0, u1 = d["units"]
assert u1["first_to_fail"] and u1["exit_status"] == 7, u1
assert not u0["first_to_fail"] and not u0["ended_by_launch"] and u0["exit_status"] == 3, u0
PY

# ---- hostfiles: slots are the ranks of each node ---------------------------

# Open MPI's form for one node, MPICH's for the other: slots=2 and :1 make 3 ranks.
printf '%s\n' '# two nodes, both this host' 'localhost slots=2 max_slots=3' '' '127.0.0.1:1  # MPICH' \
  > "$TMP/hostfile"
ranks_line='echo "$RANK $LOCAL_RANK $NODE_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE"'
run launch --no-env --hostfile "$TMP/hostfile" --tag-output -- sh -c "$ranks_line"
want 0
printf '%s\n' "[127.0.0.1:2] 2 0 1 3 1" "[localhost:0] 0 0 0 3 2" "[localhost:1] 1 1 0 3 2" > "$TMP/expect"
sort "$TMP/out" > "$TMP/out.sorted"
same "$TMP/expect" "$TMP/out.sorted"
# DeepSpeed's form is Open MPI's without max_slots.
printf '%s\n' 'localhost slots=1' '127.0.0.1 slots=2' > "$TMP/hostfile.ds"
run launch --no-env --hostfile "$TMP/hostfile.ds" --tag-output -- sh -c "$ranks_line"
want 0
printf '%s\n' "[127.0.0.1:1] 1 0 1 3 2" "[127.0.0.1:2] 2 1 1 3 2" "[localhost:0] 0 0 0 3 1" > "$TMP/expect"
sort "$TMP/out" > "$TMP/out.sorted"
same "$TMP/expect" "$TMP/out.sorted"
# The ranks per node, given, win over slots (Open MPI's rule), up to max_slots.
run launch --no-env --hostfile "$TMP/hostfile" --nproc-per-node 3 --tag-output -- sh -c "$ranks_line"
want 0
[ "$(grep -c ' 6 3$' "$TMP/out")" = 6 ] || { show; fail "3 ranks per node on 2 nodes"; }
usage_error "4 ranks per node: localhost has max_slots=3 in '$TMP/hostfile'" \
  --hostfile "$TMP/hostfile" --nproc-per-node 4 -- "${RAN[@]}"
# A malformed line is a usage error naming the file and line.
printf '%s\n' 'localhost slots=2' '127.0.0.1 slots=2 max_slots=1' > "$TMP/hostfile.bad"
usage_error "$TMP/hostfile.bad:2: slots=2 is more than max_slots=1" --hostfile "$TMP/hostfile.bad" -- "${RAN[@]}"
printf '%s\n' 'localhost:two' > "$TMP/hostfile.bad"
usage_error "$TMP/hostfile.bad:1: the count after ':' must be a number from 1 to 1024, not 'two'" \
  --hostfile "$TMP/hostfile.bad" -- "${RAN[@]}"

# ---- lines longer than the bound -------------------------------------------

# pieces FILE PREFIX: FILE is lines of PREFIX + at most LAUNCH_LINE_MAX
# (16384) bytes; prints their payloads joined.
pieces() {
  "$PYTHON" - "$1" "$2" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
prefix = sys.argv[2].encode()
assert data.endswith(b"\n"), "output does not end with a newline"
out = []
for i, line in enumerate(data[:-1].split(b"\n")):
    assert line.startswith(prefix), "line %d does not start with %r: %r" % (i, prefix, line[:40])
    assert len(line) - len(prefix) <= 16384, "line %d has %d bytes" % (i, len(line) - len(prefix))
    out.append(line[len(prefix):])
sys.stdout.write(" ".join("%d" % len(p) for p in out))
PY
}
# A 100000-byte line arrives whole, in pieces of at most 16384 bytes (written
# at once, so that its end comes with its newline).
{ head -c 100000 /dev/zero | tr '\0' y; echo; } > "$TMP/longline"
run launch --no-env -q -- sh -c 'dd if="$0" bs=100001 count=1 status=none; echo after' "$TMP/longline"
want 0
[ "$(sed '$d' "$TMP/out" | sed 's/^\[0\] //' | tr -d '\n')" = "$(head -c 100000 /dev/zero | tr '\0' y)" ] \
  || fail "the long line's payload differs from the original"
[ "$(tail -1 "$TMP/out")" = "[0] after" ] || fail "the line after the long one"
lens=$(pieces "$TMP/out" "[0] ") || fail "a 100000-byte line: not in pieces of at most 16384 bytes"
# A line of exactly 16384 bytes is not longer than the bound: one line, even
# when its newline comes a moment later.
run launch --no-env -q -- sh -c 'head -c 16384 /dev/zero | tr "\0" x; sleep 0.3; echo; echo after'
want 0
lens=$(pieces "$TMP/out" "[0] ") || fail "a 16384-byte line: not in pieces of at most 16384 bytes"
[ "$lens" = "16384 5" ] || fail "a 16384-byte line came out as lines of $lens bytes"

# ---- what the ranks inherit ------------------------------------------------

# The ranks get no descriptor but their stdin, stdout and stderr.
launch_clean() {
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      [ "$fd" -le 2 ] || eval "exec $fd>&-"
    done
    exec timeout -s KILL 60 "$SPARKCTL" launch "$@"
  )
}
# ls lists its own descriptors, the directory it reads being the lowest
# free one: 3 when the rank got 0-2 only.  (Listing the shell's own, from
# a child, would race with the shell closing its pipe ends.)
run launch_clean --no-env -q -N 2 --log-dir "$TMP/logs3" -- sh -c 'ls /proc/self/fd | tr "\n" " "'
want 0
[ "$(sort "$TMP/out")" = "$(printf '[0] 0 1 2 3 \n[1] 0 1 2 3 ')" ] || { show; fail "descriptors leaked into the ranks"; }

# ---- the agent killed ------------------------------------------------------

# The agent killed: the node is lost (3), and what its rank started does not outlive the job.
new_mark
reset_r
bg "$SPARKCTL" launch --no-env -- sh -c 'sleep "$0" & touch "$1/up.0"; wait' "$M" "$TMP/r"
wait_for 30 "the rank to start" up 1
agent=$(pgrep -P "$bg_pid") || fail "the launcher has no agent"
kill -KILL "$agent"
bg_wait 30
[ "$status" = 3 ] || { cat "$TMP/bg.err" >&2; fail "agent killed: exit $status, expected 3"; }
contains "$TMP/bg.err" "lost localhost"
wait_for 10 "the processes of a job whose agent was killed to go ($(left "$M"))" gone "$M"

# ---- --kill-stale ----------------------------------------------------------

# --kill-stale ends it and the job runs, every time.
for round in 1 2 3; do
  listen SPARKCTL_JOB_ID="$stale"
  run launch --no-env --port "$lport" --kill-stale -- sh -c 'echo "port $MASTER_PORT"'
  [ "$status" = 0 ] || { show; fail "--kill-stale (round $round): exit $status, expected 0"; }
  contains "$TMP/err" "ending sparkctl job $stale"
  contains "$TMP/out" "[0] port $lport"
  set +e
  wait "$lpid"
  lstatus=$?
  set -e
  BG=${BG/ $lpid/}
  [ "$lstatus" = 143 ] || fail "the earlier job's listener ended with $lstatus, not by SIGTERM"
done

# ---- the command's own options -------------------------------------------------

# The first word that is not an option is the command; what follows is its own.
run launch --no-env -q -N 2 sh -c 'echo "$RANK: $*"' sh -n 5 --env X=1 -q
want 0
[ "$(sort "$TMP/out")" = "$(printf '[0] 0: -n 5 --env X=1 -q\n[1] 1: -n 5 --env X=1 -q')" ] \
  || { show; fail "options after the command did not reach it"; }

# Two ranks that both fail on their own: the first is the job's failure; the
# other is not labelled as ended by sparkctl when it failed before the ending.
run launch --no-env -N 2 -- /nonexistent/prog
want 127
contains "$TMP/err" "first to fail"
! grep -E 'exit 127 .*ended by sparkctl' "$TMP/err" || fail "a rank that failed by itself is labelled as ended by sparkctl"
