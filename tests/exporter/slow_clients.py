#!/usr/bin/env python3
"""Slow and idle clients against a running 'sparkctl exporter' (loopback only).

  slow_clients.py PORT EXPECTED_LINE

The exporter runs with a short --request-timeout and an idle --idle-timeout far
longer than this script waits, so only the request deadline can close what
the checks below need closed.

  deadline  one client sends a whole request, one byte at a time, over far
            longer than the deadline: the exporter must close the connection
            before the request is complete, without answering it.
  crowd     slow clients that reconnect whenever they are closed fill the
            scraper's own address (127.0.0.1) and several others, and idle
            connections from many loopback addresses come on top: every
            scrape from 127.0.0.1 (every other one sending its request only
            0.3 s after connecting) must be answered 200 with EXPECTED_LINE,
            and every slow and idle connection must end closed by the
            exporter.

Prints one line per phase; exit 1 on failure.
"""
import resource
import socket
import sys
import threading
import time

HOST = "127.0.0.1"
PORT = int(sys.argv[1])
EXPECTED = sys.argv[2].encode()
# A bound for waits that the exporter must end long before: only a broken
# exporter reaches it, and the check then fails instead of hanging.
GIVE_UP_S = 60
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def closed_by_server(s, wait_s):
    """Whether the server closed s (end of stream or reset) within wait_s; data is read past."""
    s.settimeout(wait_s)
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def scrape(late_s=0.0):
    """GET /metrics, the request sent late_s after the connection opened."""
    chunks = []
    try:
        s = socket.create_connection((HOST, PORT), timeout=20)
        try:
            time.sleep(late_s)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            while True:
                b = s.recv(65536)
                if not b:
                    break
                chunks.append(b)
        finally:
            s.close()
    except OSError as e:
        chunks.append(("%s: %s" % (type(e).__name__, e)).encode())
    r = b"".join(chunks)
    if not r.startswith(b"HTTP/1.1 200 ") or EXPECTED not in r:
        fail("a scrape got %r" % r[:200])
        return False
    return True


def deadline():
    """Whether the exporter cut a request off while it was still arriving, unanswered."""
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 300 + b"\r\n\r\n"
    s = socket.create_connection((HOST, PORT), timeout=GIVE_UP_S)
    sent, cut, answer = 0, False, b""
    for i in range(len(request)):
        try:
            s.sendall(request[i:i + 1])
            sent += 1
            s.settimeout(0.05)
            answer = s.recv(65536)
        except socket.timeout:
            continue
        except (BrokenPipeError, ConnectionResetError):
            pass
        cut = not answer
        break
    if sent == len(request) and not answer and not cut:
        # All of it went out: an exporter without a deadline answers now.
        s.settimeout(GIVE_UP_S)
        try:
            answer = s.recv(65536)
        except OSError:
            pass
    s.close()
    if answer:
        fail("deadline: the exporter answered a request that came at one byte per 50 ms "
             "(%d of %d bytes sent): %r" % (sent, len(request), answer[:40]))
    elif not cut or sent == len(request):
        fail("deadline: the connection was not cut off while the request was arriving")
    else:
        print("%-10s closed after %d of %d bytes, unanswered" % ("deadline", sent, len(request)))


class Trickler:
    """Slow clients: each sends a request a byte at a time, and reconnects when closed."""

    def __init__(self, sources):
        self.sources = sources
        self.socks = [None] * len(sources)
        self.closed = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def connect(self, i):
        s = socket.create_connection((HOST, PORT), timeout=5, source_address=(self.sources[i], 0))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        s.setblocking(False)
        self.socks[i] = s

    def run(self):
        while not self.stop.is_set():
            for i, s in enumerate(self.socks):
                try:
                    if s is not None:
                        s.send(b"a")
                        continue
                except OSError:
                    self.closed += 1
                    s.close()
                try:
                    self.connect(i)
                except OSError:
                    self.socks[i] = None
            self.stop.wait(0.2)

    def end(self):
        self.stop.set()
        self.thread.join()
        return [s for s in self.socks if s is not None]


def crowd(slow_own, slow_other, idle, scrapes):
    sources = [HOST] * slow_own + ["127.0.0.%d" % (2 + i % 4) for i in range(slow_other)]
    trickler = Trickler(sources)
    for i in range(len(sources)):
        trickler.connect(i)
    trickler.thread.start()
    idle_socks = []
    for i in range(idle):
        try:
            idle_socks.append(socket.create_connection(
                (HOST, PORT), timeout=5, source_address=("127.0.1.%d" % (1 + i % 100), 0)))
        except OSError as e:
            fail("idle connection %d: %s" % (i, e))
            break
    # Scrapes spread over several deadlines, while the slow clients come back.
    # Every other one speaks only after a round of the slow clients'
    # reconnections, as a client on a busy host may: its connection must not
    # be given away to newcomers before its request came.
    ok = 0
    for i in range(scrapes):
        if not scrape(late_s=0.3 if i % 2 else 0.0):
            break
        ok += 1
        time.sleep(0.25)
    left = trickler.end()
    # Nothing sends now: what is still open must be closed by the exporter.
    still_open = 0
    until = time.monotonic() + GIVE_UP_S
    for s in left + idle_socks:
        if not closed_by_server(s, max(0.01, until - time.monotonic())):
            still_open += 1
        s.close()
    if still_open:
        fail("crowd: %d slow or idle connections were never closed by the exporter" % still_open)
    print("%-10s %d of %d scrapes answered among %d slow clients (%d from the scraper's "
          "address; closed %d times) and %d idle connections"
          % ("crowd", ok, scrapes, len(sources), slow_own, trickler.closed, idle))


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
deadline()
crowd(slow_own=24, slow_other=16, idle=300, scrapes=20)
sys.exit(1 if failures else 0)
