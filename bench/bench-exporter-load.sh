#!/usr/bin/env bash
# bench-exporter-load.sh - scrape latency of 'sparkctl exporter' while other
# clients hold connections: 1000 idle ones (connect, send nothing) and 32
# slow ones (a request one byte a second, never finished); both come back
# when the exporter closes them, as an attacker's would.  Two cases:
#   own     everything from the scraper's own address, 127.0.0.1
#   spread  idle from 125 other loopback addresses, slow from 4 others
# Each case scrapes /metrics over a new connection, one after another, for
# $DURATION seconds (default 20) after the crowd is in place, and prints
# p50, p99 and the slowest of the answered scrapes and how many failed (no
# answer within 30 s, or a closed connection); target: p99 under 100 ms.
# The exporter runs with its defaults on the captured tree spark-1cable,
# without NVML.  Prints figures, never fails on them.
#   ninja -C build bench-exporter-load, or
#   SPARKCTL=build/sparkctl SRCDIR=. bench/bench-exporter-load.sh
# SPARKCTL_BASE=OTHER_BINARY runs another build (the one before a change)
# through the same cases, after this one.
set -eu
: "${SPARKCTL:?}" "${SRCDIR:?}"
DURATION=${DURATION:-20}
ROOT=$SRCDIR/tests/fixtures/spark-1cable
TMP=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || { kill "$pid" 2> /dev/null; wait "$pid" 2> /dev/null; }; rm -rf "$TMP"' EXIT

# run_case BINARY NAME CASE: one exporter, one case.
run_case() {
  : > "$TMP/err" # read below, maybe before the job opens it
  "$1" exporter --root "$ROOT" --no-gpu --listen 127.0.0.1:0 2> "$TMP/err" &
  pid=$!
  local port=""
  for _ in $(seq 100); do
    port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics|\1|p' "$TMP/err")
    [ -z "$port" ] || break
    sleep 0.05
  done
  python3 - "$port" "$2" "$3" "$DURATION" << 'PY'
import resource, select, socket, sys, threading, time

port, name, case, duration = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
IDLE, SLOW = 1000, 32
if case == "own":
    idle_from = ["127.0.0.1"] * IDLE
    slow_from = ["127.0.0.1"] * SLOW
else:
    idle_from = ["127.0.1.%d" % (1 + i % 125) for i in range(IDLE)]
    slow_from = ["127.0.2.%d" % (1 + i % 4) for i in range(SLOW)]
stop = threading.Event()
reconnects = [0]


class Held:
    """A connection kept open from one source address; reopened when the exporter closes it."""

    def __init__(self, src, first):
        self.src, self.first, self.sock, self.sent = src, first, None, False
        self.open()

    def open(self):
        # Without waiting for the connection: a full queue must not stall the others.
        self.sock = socket.socket()
        self.sock.setblocking(False)
        self.sock.bind((self.src, 0))
        self.sock.connect_ex(("127.0.0.1", port))
        self.sent = not self.first

    def closed(self):
        p = select.poll()
        p.register(self.sock, select.POLLIN)
        if not p.poll(0):
            return False
        try:
            return self.sock.recv(4096) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def tick(self, trickle):
        if self.closed():
            self.sock.close()
            reconnects[0] += 1
            self.open()
            return
        try:
            if not self.sent:
                self.sock.send(self.first)  # a request's first line, once connected
                self.sent = True
            elif trickle:
                self.sock.send(b"a")
        except OSError:
            pass


def hold(sources, first, trickle):
    """Keep one connection per source; with trickle, one more byte a second on each."""
    held = [Held(src, first) for src in sources]
    ready.release()
    while not stop.is_set():
        for h in held:
            h.tick(trickle)
        stop.wait(1.0)
    for h in held:
        h.sock.close()


def scrape():
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
        ok = data.startswith(b"HTTP/1.1 200 ")
    except OSError:
        ok = False
    return ok, (time.monotonic() - t0) * 1000


ready = threading.Semaphore(0)
threads = [threading.Thread(target=hold, args=(idle_from, b"", False)),
           threading.Thread(target=hold, args=(slow_from, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ", True))]
for t in threads:
    t.start()
for t in threads:
    ready.acquire()
times, failed = [], 0
end = time.monotonic() + duration
while time.monotonic() < end:
    ok, ms = scrape()
    if ok:
        times.append(ms)
    else:
        failed += 1
    time.sleep(0.02)
stop.set()
for t in threads:
    t.join()
times.sort()
pct = lambda p: times[min(len(times) - 1, int(p / 100 * len(times)))] if times else float("nan")
print("%-8s %-7s %4d answered, %3d failed; p50 %8.1f ms  p99 %8.1f ms  slowest %8.1f ms  (%d reconnects of the crowd)"
      % (name, case, len(times), failed, pct(50), pct(99), times[-1] if times else float("nan"), reconnects[0]))
PY
  kill "$pid"
  wait "$pid" || true
  pid=""
}

echo "scrapes over ${DURATION} s among 1000 idle and 32 slow connections (exporter defaults)"
for case in own spread; do
  run_case "$SPARKCTL" sparkctl "$case"
  [ -z "${SPARKCTL_BASE:-}" ] || run_case "$SPARKCTL_BASE" base "$case"
done
