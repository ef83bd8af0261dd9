#!/usr/bin/env bash
# sparkctl top's terminal view, in a detached tmux session on a captured
# DGX Spark whose counters move while it runs: the screen as tmux shows
# it, the keys (pause, sort, interval, quit), a resize, and the terminal
# restored after q and after SIGTERM.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"

if ! command -v tmux > /dev/null 2>&1; then
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "tmux is not installed"
  skip "tmux is not installed"
fi
A=$TMP/a
fixture_copy spark-1cable "$A"
P=$A/sys/class/infiniband/rocep1s0f1/ports/1
# A private tmux server, gone with the test.
T() { tmux -S "$TMP/tmux.sock" "$@"; }
at_exit "tmux -S '$TMP/tmux.sock' kill-server 2> /dev/null"

# The counters move: 0.5 GB sent and one packet out of sequence at each step.
(
  data=$(cat "$P/counters/port_xmit_data") oos=$(cat "$P/hw_counters/out_of_sequence")
  while :; do
    data=$((data + 125000000)) oos=$((oos + 1))
    echo "$data" > "$TMP/data.new"
    echo "$oos" > "$TMP/oos.new"
    mv "$TMP/data.new" "$P/counters/port_xmit_data"
    mv "$TMP/oos.new" "$P/hw_counters/out_of_sequence"
    sleep 0.05
  done
) &
WRITER=$!
at_exit "kill $WRITER 2> /dev/null; wait $WRITER 2> /dev/null"

# start NAME: top in a new 100x30 session; after it exits the pane records
# its exit status and the terminal's modes.
start() {
  T new-session -d -s "$1" -x 100 -y 30 \
    "echo \$\$ > '$TMP/$1.pid'; env LD_LIBRARY_PATH='$FAKE_LIBDIR' SPARKCTL_FAKE_GPU=gb10 \
TERM=screen '$SPARKCTL' top --root '$A' --interval 0.2; echo \"exit=\$?\" > '$TMP/$1.exit'; \
stty -a > '$TMP/$1.stty'; sleep 60"
}
screen() { T capture-pane -p -t "$1" > "$TMP/screen"; }
# wait_screen NAME REGEX: until the screen has a line matching REGEX (10 s at most).
wait_screen() {
  local i
  for i in $(seq 100); do
    screen "$1"
    grep -qE -- "$2" "$TMP/screen" && return 0
    sleep 0.1
  done
  cat "$TMP/screen" >&2
  fail "the screen never showed /$2/"
}
wait_exit() {
  local i
  for i in $(seq 100); do
    [ -s "$TMP/$1.exit" ] && [ -s "$TMP/$1.stty" ] && return 0
    sleep 0.1
  done
  screen "$1"
  cat "$TMP/screen" >&2
  fail "top did not exit"
}
# The terminal is back in its normal modes: canonical input, echo, the cursor.
restored() {
  grep -qE '(^| )icanon( |;|$)' "$TMP/$1.stty" && grep -qE '(^| )echo( |;|$)' "$TMP/$1.stty" ||
    { cat "$TMP/$1.stty" >&2; fail "the terminal was not restored"; }
}

start one
wait_screen one "^sparkctl top  spark-01  every 0\.2 s  sort name$"
wait_screen one '^  0 NVIDIA GB10  37%  11\.2 W  45 C  6\.4/122\.4 GiB unified$'
wait_screen one '^q quit  p pause  \+/- interval  s sort$'
# Any rate above zero: how much depends on how fast the writer runs.
wait_screen one '^rocep1s0f1/1   enp1s0f1np1   ACTIVE +([1-9][0-9]*\.[0-9]{2}|0\.0[1-9]|0\.[1-9][0-9])    0\.00 +[ .:=+*#%@-]*[:=+*#%@-][ .:=+*#%@-]*$'
# the flag does not fit after the graph: a line of its own
wait_screen one '^  ! out_of_sequence_packets_received \+[0-9]+$'
wait_screen one '^roceP2p1s0f1/1 enP2p1s0f1np1 ACTIVE    0\.00    0\.00 +\.+$'

T send-keys -t one s
wait_screen one "^sparkctl top  spark-01  every 0\.2 s  sort traffic$"
# sorted by traffic: the busy port first, once a sample saw it move
busy_first() { grep -A1 '^PORT' "$TMP/screen" | tail -n 1 | grep -qE '^rocep1s0f1/1 +enp1s0f1np1 +ACTIVE +[0-9.]*[1-9]'; }
for i in $(seq 100); do
  screen one
  busy_first && break
  sleep 0.1
done
busy_first || { cat "$TMP/screen" >&2; fail "not sorted by traffic"; }
T send-keys -t one p
wait_screen one "^sparkctl top  PAUSED  spark-01  every 0\.2 s  sort traffic$"
# paused: the figures stay as they are
screen one
cp "$TMP/screen" "$TMP/paused"
sleep 0.6
screen one
same "$TMP/paused" "$TMP/screen"
T send-keys -t one ' '
wait_screen one "^sparkctl top  spark-01  every 0\.2 s  sort traffic$"
T send-keys -t one +
wait_screen one "every 0\.5 s"
T send-keys -t one - -
wait_screen one "every 0\.2 s"
# narrower: no NETDEV column
T resize-window -t one -x 60 -y 30
wait_screen one '^PORT           STATE  TX Gb/s RX Gb/s HISTORY    FLAGS$'
T send-keys -t one q
wait_exit one
grep -qx 'exit=0' "$TMP/one.exit" || fail "q: $(cat "$TMP/one.exit")"
restored one
screen one
lacks "$TMP/screen" "q quit"

# SIGTERM (and so a closed terminal's SIGHUP-less kill): the terminal is restored too.
start two
wait_screen two '^q quit'
kill -TERM "$(pgrep -P "$(cat "$TMP/two.pid")" -x sparkctl || pgrep -P "$(cat "$TMP/two.pid")")"
wait_exit two
grep -qx 'exit=143' "$TMP/two.exit" || fail "SIGTERM: $(cat "$TMP/two.exit")"
restored two
