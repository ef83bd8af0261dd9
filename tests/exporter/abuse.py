#!/usr/bin/env python3
"""Abuse of a running 'sparkctl exporter' (loopback only).

  abuse.py PORT PID EXPECTED_LINE MAX_PER_IP TIMEOUT_S

Runs, in order: scrapes, 10 000 malformed requests, oversized request
lines and headers, slow clients, a burst of concurrent connections, other
methods and paths, and scrapes again.  Every scrape must return 200 with
EXPECTED_LINE in the body; the exporter's VmRSS after must be within a
generous bound of before.  Prints one line per phase; exit 1 on failure.
"""
import random
import socket
import sys
import threading
import time

HOST = "127.0.0.1"
PORT, PID = int(sys.argv[1]), int(sys.argv[2])
EXPECTED = sys.argv[3].encode()
MAX_PER_IP, TIMEOUT_S = int(sys.argv[4]), int(sys.argv[5])
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def rss_kib():
    for line in open("/proc/%d/status" % PID):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def exchange(data, timeout=10.0, shut=True):
    """Send data, read until the server closes; the response bytes (b"" if none)."""
    s = socket.create_connection((HOST, PORT), timeout=timeout)
    try:
        try:
            if data:
                s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server answered and closed before all of it was sent
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        s.close()


def status(resp):
    if not resp.startswith(b"HTTP/1."):
        return None
    return int(resp.split(b" ", 2)[1])


def scrape():
    t0 = time.monotonic()
    r = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    dt = time.monotonic() - t0
    if status(r) != 200 or EXPECTED not in r:
        fail("a scrape returned %r" % r[:200])
    return dt


def scrapes(n, phase):
    worst = max(scrape() for _ in range(n))
    print("%-22s %d scrapes ok, slowest %.1f ms" % (phase, n, worst * 1000))


MALFORMED = [
    b"\x00\x01\x02\x03garbage\r\n\r\n",
    b"GET\r\n\r\n",
    b"GET /metrics HTTP/9.9\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"\r\n\r\n\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n Host: folded\r\n\r\n",
    b"GET /met\x00rics HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /" + b"%" * 64 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    b"G\xffT /metrics HTTP/1.1\r\n\r\n",
    b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial body",
    b"GET /metrics HTTP/1.1\nHost: x\n\n\x7f\x7f",
    b"GET  /metrics  HTTP/1.1\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X: y\r\n" * 2000 + b"\r\n",
]


def malformed(total, threads=4):
    counts = {}
    lock = threading.Lock()
    rng = random.Random(8)
    payloads = [MALFORMED[i % len(MALFORMED)] for i in range(total // 2)]
    payloads += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
                 for _ in range(total - len(payloads))]
    rng.shuffle(payloads)

    def worker(part):
        for p in part:
            try:
                st = status(exchange(p))
            except OSError as e:
                st = "%s %s" % (type(e).__name__, e)
            with lock:
                counts[st] = counts.get(st, 0) + 1

    ts = [threading.Thread(target=worker, args=(payloads[i::threads],)) for i in range(threads)]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    answered = sum(v for k, v in counts.items() if isinstance(k, int) or k is None)
    if answered != total:
        fail("malformed requests: %r" % counts)
    if counts.get(200, 0) > total // len(MALFORMED) * 2:
        fail("too many malformed requests were served: %r" % counts)
    print("%-22s %d in %.1f s, answers %s" % ("malformed", total, time.monotonic() - t0,
          ", ".join("%s:%d" % (k, v) for k, v in sorted(counts.items(), key=str))))


def oversized():
    big_header = exchange(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 65536 + b"\r\n\r\n")
    big_url = exchange(b"GET /" + b"a" * 262144 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    for name, r in (("64 KiB header", big_header), ("256 KiB URL", big_url)):
        st = status(r)
        if st not in (413, 414, 431, None):
            fail("%s: answered %r" % (name, r[:100]))
        if st is None and r:
            fail("%s: answered %r" % (name, r[:100]))
    print("%-22s header -> %s, URL -> %s" % ("oversized", status(big_header), status(big_url)))


def slow_clients(n):
    socks = []
    for _ in range(n):
        s = socket.create_connection((HOST, PORT), timeout=TIMEOUT_S + 5)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(s)
    t0 = time.monotonic()
    # A byte now and then from each; the others are served meanwhile.
    for i in range(3):
        for s in socks:
            try:
                s.sendall(b"a")
            except OSError:
                pass
        scrape()
        time.sleep(0.3)
    # The server drops them once they idle past its timeout.
    closed = 0
    for s in socks:
        try:
            if s.recv(1024) == b"":
                closed += 1
        except (ConnectionResetError, socket.timeout):
            closed += isinstance(sys.exc_info()[1], ConnectionResetError)
        s.close()
    took = time.monotonic() - t0
    if closed != n:
        fail("slow clients: %d of %d closed by the server" % (closed, n))
    print("%-22s %d held open, served others meanwhile, dropped after %.1f s" % ("slow clients", n, took))


def burst(n):
    # Each begins a request: a silent connection waits in the kernel until
    # it speaks (TCP_DEFER_ACCEPT), these are the exporter's at once.
    socks = []
    for _ in range(n):
        socks.append(socket.create_connection((HOST, PORT), timeout=3))
        socks[-1].sendall(b"GET /metrics HTTP/1.1\r\n")
    time.sleep(0.5)
    dropped = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                dropped += 1
        except BlockingIOError:
            pass
        except ConnectionResetError:
            dropped += 1
    for s in socks:
        s.close()
    time.sleep(0.5)  # the server's poll sees them closed
    if dropped < n - MAX_PER_IP:
        fail("burst: only %d of %d connections over the per-address limit were closed" % (dropped, n))
    print("%-22s %d at once: %d closed over the limit of %d" % ("burst", n, dropped, MAX_PER_IP))


def methods_and_paths(n):
    rng = random.Random(5)
    for _ in range(n):
        if rng.random() < 0.5:
            m = rng.choice([b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"BREW"])
            r = exchange(m + b" /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            if status(r) != 405 or b"Allow: GET, HEAD" not in r:
                fail("%s /metrics answered %r" % (m, r[:200]))
        else:
            p = rng.choice([b"/x", b"/metrics/", b"/metrics.txt", b"/../../etc/passwd", b"/%2e%2e/"])
            r = exchange(b"GET " + p + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            if status(r) != 404:
                fail("GET %s answered %r" % (p, r[:200]))
    print("%-22s %d answered 405 or 404" % ("methods and paths", n))


scrapes(100, "warm-up")
rss0 = rss_kib()
malformed(10000)
oversized()
slow_clients(min(4, MAX_PER_IP - 2))
burst(4 * MAX_PER_IP + 8)
methods_and_paths(500)
scrapes(100, "after")
rss1 = rss_kib()
print("%-22s VmRSS %d KiB before, %d KiB after" % ("memory", rss0, rss1))
if rss1 - rss0 > 16 * 1024:
    fail("VmRSS grew by %d KiB" % (rss1 - rss0))
sys.exit(1 if failures else 0)
