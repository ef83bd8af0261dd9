#!/usr/bin/env bash
# contrib/: the alert rules pass promtool (syntax and unit tests of what
# fires), the scrape configuration is valid, every metric the Grafana
# dashboard and the rules name is one the exporter serves, and the systemd
# unit verifies.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"
require_prometheus
C=$SRCDIR/contrib

promtool check rules "$C/prometheus/sparkctl-alerts.yml" > "$TMP/check" 2>&1 ||
  { cat "$TMP/check" >&2; fail "promtool check rules"; }
promtool check config "$C/prometheus/prometheus.yml" > "$TMP/check" 2>&1 ||
  { cat "$TMP/check" >&2; fail "promtool check config"; }

# What fires, and what stays quiet: a hot GPU, a port that went down (and
# one that never came up), a retransmit storm.
cat > "$TMP/rules-test.yml" << EOF
rule_files:
  - $C/prometheus/sparkctl-alerts.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'sparkctl_gpu_temperature_celsius{instance="spark-1",gpu="0",uuid="GPU-x"}'
        values: '70 88 89 90 91 92'
      - series: 'sparkctl_rdma_port_state_id{instance="spark-1",device="rocep1s0f1",port="1"}'
        values: '4 4 4 1 1 1'
      - series: 'sparkctl_rdma_port_state_id{instance="spark-1",device="rocep1s0f0",port="1"}'
        values: '1 1 1 1 1 1'
      - series: 'sparkctl_rdma_local_ack_timeout_errors_total{instance="spark-1",device="rocep1s0f1",port="1"}'
        values: '0+1200x20'
      - series: 'sparkctl_rdma_packet_sequence_errors_total{instance="spark-1",device="rocep1s0f1",port="1"}'
        values: '0+0x20'
      - series: 'sparkctl_rdma_local_ack_timeout_errors_total{instance="spark-1",device="roceP2p1s0f1",port="1"}'
        values: '0+6x20'
      - series: 'sparkctl_rdma_packet_sequence_errors_total{instance="spark-1",device="roceP2p1s0f1",port="1"}'
        values: '0+0x20'
    alert_rule_test:
      - eval_time: 5m
        alertname: SparkctlGpuHot
        exp_alerts:
          - exp_labels: {severity: warning, instance: spark-1, gpu: "0", uuid: GPU-x}
            exp_annotations:
              summary: "GPU 0 on spark-1 at 92 °C"
              description: "The GPU has been above 85 °C for 2 minutes; check airflow and fans."
      - eval_time: 5m
        alertname: SparkctlRdmaPortDown
        exp_alerts:
          - exp_labels: {severity: critical, instance: spark-1, device: rocep1s0f1, port: "1"}
            exp_annotations:
              summary: "RDMA port rocep1s0f1/1 on spark-1 went down"
              description: "The port was ACTIVE within the last hour; NCCL jobs using it hang or fail."
      - eval_time: 20m
        alertname: SparkctlRdmaRetransmits
        exp_alerts:
          - exp_labels: {severity: warning, instance: spark-1, device: rocep1s0f1, port: "1"}
            exp_annotations:
              summary: "RDMA retransmits on rocep1s0f1/1 at spark-1: 20/s"
              description: "Packets are lost in the fabric (check PFC/ECN, MTU and cables)."
EOF
promtool test rules "$TMP/rules-test.yml" > "$TMP/check" 2>&1 ||
  { cat "$TMP/check" >&2; fail "promtool test rules"; }

# Every metric named in the dashboard and the rules is served.
fixture_copy spark-1cable "$TMP/spark"
expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" exporter --once --root "$TMP/spark"
cp "$TMP/out" "$TMP/served"
expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=h100x8 "$SPARKCTL" exporter --once --root "$FIXTURES/ib-server"
cat "$TMP/out" >> "$TMP/served"
python3 - "$C/grafana/sparkctl-dashboard.json" "$C/prometheus/sparkctl-alerts.yml" "$TMP/served" << 'EOF' || fail "contrib/ names metrics the exporter does not serve"
import json, re, sys
dash = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
exprs += [v["definition"] for v in dash["templating"]["list"] if "definition" in v]
exprs.append(open(sys.argv[2]).read())
served = {l.split()[2] for l in open(sys.argv[3]) if l.startswith("# TYPE ")}
# Xid counters appear with the first Xid (t1100 checks them).
served.add("sparkctl_gpu_xid_errors_total")
named = {m for e in exprs for m in re.findall(r"\bsparkctl_[a-z0-9_]+", e)}
missing = sorted(named - served)
if missing or len(named) < 20:
    print("not served:", missing, "named:", len(named), file=sys.stderr)
    sys.exit(1)
assert len([p for p in dash["panels"] if p["type"] == "timeseries"]) >= 12
EOF

# The unit, pointed at this sparkctl.
if command -v systemd-analyze > /dev/null 2>&1; then
  sed "s|/usr/local/bin/sparkctl|$SPARKCTL|" "$C/systemd/sparkctl-exporter.service" > "$TMP/sparkctl-exporter.service"
  SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$TMP/sparkctl-exporter.service" > "$TMP/check" 2>&1 ||
    { cat "$TMP/check" >&2; fail "systemd-analyze verify"; }
  [ ! -s "$TMP/check" ] || { cat "$TMP/check" >&2; fail "systemd-analyze verify warned"; }
else
  note "no systemd-analyze: the unit is not verified"
fi
