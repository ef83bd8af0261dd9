#!/usr/bin/env bash
# A real Prometheus server (Debian's prometheus) scrapes sparkctl exporter on
# 127.0.0.1, with contrib/'s alert rules loaded; its HTTP API returns the
# exporter's exact values, also after a counter changed.  It also scrapes a
# second exporter over TLS with basic authentication (--web-config).
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"
require_prometheus

R=$TMP/spark
fixture_copy spark-1cable "$R"
if command -v openssl > /dev/null 2>&1; then
  make_web_config "$TMP/web"
  exporter_start --no-gpu --root "$R" --web-config "$TMP/web/web.yml"
  tls_target=${EXPORTER_URL#https://}
  TLS_EXPORTER_PID=$EXPORTER_PID TLS_EXPORTER_ERR=$EXPORTER_ERR
else
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" != 1 ] || fail "no openssl"
  tls_target=""
fi
LD_LIBRARY_PATH=$FAKE_LIBDIR SPARKCTL_FAKE_GPU=gb10 exporter_start --root "$R"
target=${EXPORTER_URL#http://}

cat > "$TMP/prometheus.yml" << EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $SRCDIR/contrib/prometheus/sparkctl-alerts.yml
scrape_configs:
  - job_name: sparkctl
    static_configs:
      - targets: ['$target']
EOF
[ -z "$tls_target" ] || cat >> "$TMP/prometheus.yml" << EOF
  - job_name: sparkctl-tls
    scheme: https
    tls_config:
      ca_file: $TMP/web/cert.pem
    basic_auth:
      username: alice
      password: s3cret
    static_configs:
      - targets: ['$tls_target']
EOF
promtool check config "$TMP/prometheus.yml" > "$TMP/check.out" 2>&1 ||
  { cat "$TMP/check.out" >&2; fail "promtool check config"; }
# A free loopback port for Prometheus: the kernel's pick, released just before
# Prometheus binds it, so another program may take it first; then try again.
for try in 1 2 3; do
  pport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn > "$TMP/prometheus.log" 2>&1 &
  prom_pid=$!
  at_exit "kill_child $prom_pid"
  sleep 1
  kill -0 "$prom_pid" 2> /dev/null && break
  grep -q 'address already in use' "$TMP/prometheus.log" ||
    { cat "$TMP/prometheus.log" >&2; fail "prometheus did not start"; }
done

# query EXPR: the value of the single series EXPR selects ("" while there is none).
query() {
  python3 - "http://127.0.0.1:$pport" "$1" << 'EOF'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "/api/v1/query?" + urllib.parse.urlencode({"query": sys.argv[2]})
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    d = json.load(opener.open(url, timeout=5))
except OSError:
    sys.exit(0)
r = d["data"]["result"] if d.get("status") == "success" else []
if len(r) == 1:
    print(r[0]["value"][1])
EOF
}

# wait_value EXPR WANT: Prometheus answers WANT for EXPR within 60 s.
wait_value() {
  local got="" i
  for i in $(seq 240); do
    got=$(query "$1")
    [ "$got" != "$2" ] || return 0
    kill -0 "$prom_pid" 2> /dev/null || { cat "$TMP/prometheus.log" >&2; fail "prometheus exited"; }
    sleep 0.25
  done
  cat "$TMP/prometheus.log" >&2
  fail "Prometheus answers '$got' for $1, expected '$2'"
}

wait_value 'up{job="sparkctl"}' 1
wait_value 'sparkctl_gpu_temperature_celsius{gpu="0"}' 45
wait_value 'sparkctl_gpu_power_watts{gpu="0"}' 11.25
wait_value 'sparkctl_rdma_port_data_transmitted_bytes_total{job="sparkctl",device="rocep1s0f1",port="1"}' 733902439248
wait_value 'sparkctl_gpu_info{memory_type="unified"}' 1
wait_value 'count(sparkctl_rdma_port_info{job="sparkctl"})' 4
if [ -n "$tls_target" ]; then
  wait_value 'up{job="sparkctl-tls"}' 1
  wait_value 'sparkctl_rdma_port_data_transmitted_bytes_total{job="sparkctl-tls",device="rocep1s0f1",port="1"}' 733902439248
fi
echo 183475610812 > "$R/sys/class/infiniband/rocep1s0f1/ports/1/counters/port_xmit_data"
wait_value 'sparkctl_rdma_port_data_transmitted_bytes_total{job="sparkctl",device="rocep1s0f1",port="1"}' 733902443248
# The alert rules loaded and evaluate without error.
python3 - "http://127.0.0.1:$pport" << 'EOF' || fail "the alert rules are not all healthy"
import json, sys, time, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
for _ in range(40):
    d = json.load(opener.open(sys.argv[1] + "/api/v1/rules", timeout=5))
    rules = [r for g in d["data"]["groups"] for r in g["rules"]]
    if rules and all(r.get("health") == "ok" for r in rules):
        print("%d rules ok" % len(rules))
        sys.exit(0)
    time.sleep(0.25)
print(json.dumps(d, indent=1), file=sys.stderr)
sys.exit(1)
EOF
exporter_stop
if [ -n "$tls_target" ]; then
  EXPORTER_PID=$TLS_EXPORTER_PID EXPORTER_ERR=$TLS_EXPORTER_ERR
  exporter_stop
fi
