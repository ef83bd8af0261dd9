#!/usr/bin/env bash
# CPU time per scrape: 'sparkctl exporter' and Prometheus' node_exporter
# serving the same captured tree (tests/fixtures/ib-server: 8 HCAs), each
# scraped N times over loopback; the CPU time is the server process's own
# (utime + stime from /proc/PID/stat), so the client's cost is not counted.
# node_exporter runs only the collectors that overlap sparkctl's (InfiniBand
# counters, netdev classes, memory); sparkctl runs all of its sysfs
# collectors but no GPU (--no-gpu), and keeps its files open between scrapes
# as it does in service.  Prints one line per server and the ratio.
set -eu
: "${SPARKCTL:?}" "${SRCDIR:?}"
N=${N:-300}
ROOT=$SRCDIR/tests/fixtures/ib-server
NODE_EXPORTER=$(command -v prometheus-node-exporter || command -v node_exporter || true)
[ -n "$NODE_EXPORTER" ] || { echo "node_exporter not installed (apt-get install prometheus-node-exporter)"; exit 0; }
TMP=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill $p 2> /dev/null || true; done; rm -rf "$TMP"' EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

: > "$TMP/sparkctl.err" # read below, maybe before the job opens it
"$SPARKCTL" exporter --root "$ROOT" --no-gpu --listen 127.0.0.1:0 2> "$TMP/sparkctl.err" &
sp_pid=$!
pids="$pids $sp_pid"
for _ in $(seq 100); do grep -q "serving" "$TMP/sparkctl.err" && break; sleep 0.05; done
sp_url=$(sed -n 's/.*serving \(http[^ ]*\).*/\1/p' "$TMP/sparkctl.err")

ne_port=$(free_port)
"$NODE_EXPORTER" --web.listen-address=127.0.0.1:$ne_port --path.sysfs="$ROOT/sys" \
  --path.procfs="$ROOT/proc" --collector.disable-defaults --collector.infiniband \
  --collector.netclass --collector.meminfo > /dev/null 2>&1 &
ne_pid=$!
pids="$pids $ne_pid"
ne_url=http://127.0.0.1:$ne_port/metrics
for _ in $(seq 100); do python3 -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1])" "$ne_url" 2> /dev/null && break; sleep 0.05; done

python3 - "$N" "$sp_pid" "$sp_url" "$ne_pid" "$ne_url" "$("$NODE_EXPORTER" --version 2>&1 | head -1)" << 'PY'
import os, sys, urllib.request
n = int(sys.argv[1])
tick = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick
def run(pid, url):
    body = b""
    for _ in range(20):
        body = urllib.request.urlopen(url).read()
    c0 = cpu(pid)
    for _ in range(n):
        urllib.request.urlopen(url).read()
    per = (cpu(pid) - c0) / n * 1000
    samples = sum(1 for l in body.decode().splitlines() if l and not l.startswith("#"))
    return per, samples, len(body)
sp = run(int(sys.argv[2]), sys.argv[3])
ne = run(int(sys.argv[4]), sys.argv[5])
print(f"sparkctl exporter : {sp[0]:.3f} ms CPU per scrape, {sp[1]} samples, {sp[2]} bytes ({sp[0] / sp[1] * 1000:.2f} us per sample)")
print(f"node_exporter     : {ne[0]:.3f} ms CPU per scrape, {ne[1]} samples, {ne[2]} bytes ({ne[0] / ne[1] * 1000:.2f} us per sample)  [{sys.argv[6]}]")
print(f"ratio (sparkctl / node_exporter): {sp[0] / ne[0]:.2f} per scrape, {(sp[0] / sp[1]) / (ne[0] / ne[1]):.2f} per sample, over {n} scrapes each")
PY
