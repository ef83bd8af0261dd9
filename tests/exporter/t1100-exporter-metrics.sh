#!/usr/bin/env bash
# sparkctl exporter on a captured DGX Spark (GB10) and an 8-GPU InfiniBand
# server, through the stand-in NVML: exact values, counters that change
# between two scrapes, Xid events, promtool's lint, the HTTP answers, and
# the errors of bad command lines.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"

R=$TMP/spark
fixture_copy spark-1cable "$R"
PORT1=$R/sys/class/infiniband/rocep1s0f1/ports/1
has_promtool=1
command -v promtool > /dev/null 2>&1 || has_promtool=0
[ "$has_promtool" = 1 ] || [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" != 1 ] || fail "no promtool"

# --- One scrape of the DGX Spark (--once).
expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" exporter --once --root "$R"
[ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "--once wrote to stderr"; }
cp "$TMP/out" "$TMP/gb10.txt"
[ "$has_promtool" = 0 ] || promlint "$TMP/gb10.txt"
U='gpu="0",uuid="GPU-a1b2c3d4-0b10-4f00-8000-00000f010000"'
L='device="rocep1s0f1",port="1"'
have_samples "$TMP/gb10.txt" << EOF
sparkctl_gpu_devices 1
sparkctl_gpu_info{$U,name="NVIDIA GB10",pci_bus_id="0000000F:01:00.0",driver_version="580.95.05",memory_type="unified"} 1
sparkctl_gpu_utilization_ratio{$U} 0.37
sparkctl_gpu_temperature_celsius{$U} 45
sparkctl_gpu_power_watts{$U} 11.25
sparkctl_gpu_energy_joules_total{$U} 123456.789
sparkctl_gpu_clock_hertz{$U,clock="graphics"} 2418000000
sparkctl_gpu_clock_hertz{$U,clock="sm"} 2418000000
sparkctl_gpu_clock_hertz{$U,clock="video"} 1950000000
sparkctl_gpu_clock_event_reason_active{$U,reason="gpu_idle"} 1
sparkctl_gpu_clock_event_reason_active{$U,reason="sw_power_cap"} 0
sparkctl_gpu_clock_event_reason_active{$U,reason="hw_thermal_slowdown"} 0
sparkctl_gpu_nvml_up 1
sparkctl_memory_total_bytes 131415797760
sparkctl_memory_available_bytes 124501942272
sparkctl_memory_cma_total_bytes 1073741824
sparkctl_rdma_info{device="rocep1s0f1",board_id="NVD0000000087",firmware_version="28.45.4028",hca_type="MT4129"} 1
sparkctl_rdma_port_state_id{$L} 4
sparkctl_rdma_port_physical_state_id{$L} 5
sparkctl_rdma_port_rate_bytes_per_second{$L} 25000000000
sparkctl_rdma_port_info{$L,link_layer="Ethernet",netdev="enp1s0f1np1",state="ACTIVE",phys_state="LinkUp"} 1
sparkctl_rdma_port_data_transmitted_bytes_total{$L} 733902439248
sparkctl_rdma_port_data_received_bytes_total{$L} 733880604944
sparkctl_rdma_port_packets_transmitted_total{$L} 177503341
sparkctl_rdma_out_of_sequence_packets_received_total{$L} 0
sparkctl_rdma_port_state_id{device="rocep1s0f0",port="1"} 1
sparkctl_network_mtu_bytes{device="enp1s0f1np1"} 9000
sparkctl_network_speed_bytes{device="enp1s0f1np1"} 25000000000
sparkctl_network_carrier{device="enp1s0f1np1"} 1
sparkctl_network_up{device="enp1s0f1np1"} 1
sparkctl_network_receive_bytes_total{device="enp1s0f1np1"} 0
sparkctl_thermal_zone_temp_celsius{zone="0",type="acpitz"} 41
sparkctl_hwmon_temp_celsius{chip="hwmon0",sensor="temp1"} 38.85
sparkctl_hwmon_sensor_label{chip="hwmon0",sensor="temp1",label="Composite"} 1
sparkctl_pcie_aer_errors_total{device="0000:01:00.1",severity="correctable"} 0
sparkctl_scrape_collector_success{collector="gpu"} 1
sparkctl_scrape_collector_success{collector="rdma"} 1
sparkctl_scrape_collector_success{collector="netdev"} 1
sparkctl_scrape_collector_success{collector="thermal"} 1
sparkctl_scrape_collector_success{collector="hwmon"} 1
sparkctl_scrape_collector_success{collector="aer"} 1
sparkctl_scrape_collector_success{collector="meminfo"} 1
EOF
# Unified memory: NVML has no GPU memory figure, and none is made up; GB10
# reports no power limit and no memory clock.
lacks "$TMP/gb10.txt" "sparkctl_gpu_memory_total_bytes"
lacks "$TMP/gb10.txt" "sparkctl_gpu_memory_used_bytes"
lacks "$TMP/gb10.txt" "sparkctl_gpu_power_limit_watts{"
lacks "$TMP/gb10.txt" 'clock="memory"'
# No port without a PMA makes up a zero: "N/A (no PMA)" is left out.
grep -q '^sparkctl_build_info{version="[0-9.]*",revision="[^"]*"} 1$' "$TMP/gb10.txt" ||
  fail "no sparkctl_build_info"
grep -q '^sparkctl_scrape_duration_seconds [0-9.e-]*$' "$TMP/gb10.txt" ||
  fail "no sparkctl_scrape_duration_seconds"
# HELP and TYPE once per family, before its samples, which are contiguous.
python3 - "$TMP/gb10.txt" << 'EOF' || fail "families are not grouped"
import sys
seen, last = set(), None
for line in open(sys.argv[1]):
    if line.startswith("# HELP "):
        name = line.split()[2]
        assert name not in seen, name
        seen.add(name)
        last = name
        continue
    if line.startswith("#"):
        continue
    name = line.split("{")[0].split(" ")[0]
    assert name == last, (name, last)
EOF

# --- The 8-GPU server: every GPU with its own figures.
expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=h100x8 "$SPARKCTL" exporter --once --root "$FIXTURES/ib-server"
[ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "--once wrote to stderr"; }
cp "$TMP/out" "$TMP/h100.txt"
[ "$has_promtool" = 0 ] || promlint "$TMP/h100.txt"
i=0
for bus in 1b 43 52 61 9d c3 d1 df; do
  G="gpu=\"$i\",uuid=\"GPU-e5f6a7b8-0100-4800-8000-000000${bus}0000\""
  cat << EOF
sparkctl_gpu_info{$G,name="NVIDIA H100 80GB HBM3",pci_bus_id="00000000:${bus^^}:00.0",driver_version="550.127.05",memory_type="dedicated"} 1
sparkctl_gpu_memory_total_bytes{$G} 85520809984
sparkctl_gpu_memory_used_bytes{$G} 268435456
sparkctl_gpu_utilization_ratio{$G} $(python3 -c "print((50 + $i) / 100)")
sparkctl_gpu_memory_utilization_ratio{$G} 0.2
sparkctl_gpu_temperature_celsius{$G} $((40 + i))
sparkctl_gpu_power_watts{$G} $((300 + i))
sparkctl_gpu_power_limit_watts{$G} 700
sparkctl_gpu_energy_joules_total{$G} $((5000 + 1000 * i))
sparkctl_gpu_clock_hertz{$G,clock="memory"} 2619000000
sparkctl_gpu_clock_event_reason_active{$G,reason="sw_power_cap"} 1
sparkctl_gpu_clock_event_reason_active{$G,reason="gpu_idle"} 0
EOF
  i=$((i + 1))
done > "$TMP/h100.want"
echo "sparkctl_gpu_devices 8" >> "$TMP/h100.want"
have_samples "$TMP/h100.txt" < "$TMP/h100.want"
[ "$(grep -c '^sparkctl_rdma_port_info{' "$TMP/h100.txt")" = 8 ] || fail "not 8 RDMA ports"

# --- Serving: counters that change between two scrapes, and Xid events.
XID=$TMP/xid
: > "$XID"
LD_LIBRARY_PATH=$FAKE_LIBDIR SPARKCTL_FAKE_GPU=gb10 SPARKCTL_FAKE_XID_FILE=$XID \
  exporter_start --root "$R"
scrape "$TMP/s1"
have_samples "$TMP/s1" << EOF
sparkctl_rdma_port_data_transmitted_bytes_total{$L} 733902439248
sparkctl_gpu_xid_events_watched{$U} 1
EOF
lacks "$TMP/s1" "sparkctl_gpu_xid_errors_total{"
# The server keeps counter files open between scrapes; what it serves is what
# --once reads afresh (the Xid watch and the scrape's duration aside).
expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" exporter --once --root "$R"
grep -v -e '^sparkctl_scrape_duration_seconds ' -e '^sparkctl_gpu_xid_events_watched' "$TMP/out" > "$TMP/once"
scrape "$TMP/s1b"
grep -v -e '^sparkctl_scrape_duration_seconds ' -e '^sparkctl_gpu_xid_events_watched' "$TMP/s1b" > "$TMP/served"
same "$TMP/once" "$TMP/served"
echo 183475610812 > "$PORT1/counters/port_xmit_data"
echo 17 > "$PORT1/hw_counters/out_of_sequence"
echo 4294967295 > "$PORT1/hw_counters/np_cnp_sent"
echo 9 > "$PORT1/hw_counters/local_ack_timeout_err"
echo 1 > "$PORT1/counters/link_downed"
echo '1: DOWN' > "$PORT1/state"
echo 123456789 > "$R/sys/class/net/enp1s0f1np1/statistics/rx_bytes"
echo 85500 > "$R/sys/class/thermal/thermal_zone0/temp"
scrape "$TMP/s2"
have_samples "$TMP/s2" << EOF
sparkctl_rdma_port_data_transmitted_bytes_total{$L} 733902443248
sparkctl_rdma_out_of_sequence_packets_received_total{$L} 17
sparkctl_rdma_np_cnp_packets_sent_total{$L} 4294967295
sparkctl_rdma_local_ack_timeout_errors_total{$L} 9
sparkctl_rdma_link_downed_total{$L} 1
sparkctl_rdma_port_state_id{$L} 1
sparkctl_rdma_port_info{$L,link_layer="Ethernet",netdev="enp1s0f1np1",state="DOWN",phys_state="LinkUp"} 1
sparkctl_network_receive_bytes_total{device="enp1s0f1np1"} 123456789
sparkctl_thermal_zone_temp_celsius{zone="0",type="acpitz"} 85.5
EOF
# A counter file the kernel would never write fails its collector, not the scrape.
echo bogus > "$PORT1/hw_counters/packet_seq_err"
scrape "$TMP/s3"
have_samples "$TMP/s3" << EOF
sparkctl_scrape_collector_success{collector="rdma"} 0
sparkctl_scrape_collector_success{collector="netdev"} 1
sparkctl_rdma_out_of_sequence_packets_received_total{$L} 17
EOF
echo 0 > "$PORT1/hw_counters/packet_seq_err"

# Xid 79 twice and 13 once: a counter per code, each repeat counted.
printf '0 79\n0 79\n0 13\n' >> "$XID"
for i in $(seq 100); do
  scrape "$TMP/s4"
  grep -qF "sparkctl_gpu_xid_errors_total{$U,xid=\"13\"} 1" "$TMP/s4" && break
  sleep 0.1
done
have_samples "$TMP/s4" << EOF
sparkctl_gpu_xid_errors_total{$U,xid="79"} 2
sparkctl_gpu_xid_errors_total{$U,xid="13"} 1
EOF
printf '0 79\n' >> "$XID"
for i in $(seq 100); do
  scrape "$TMP/s5"
  grep -qF "sparkctl_gpu_xid_errors_total{$U,xid=\"79\"} 3" "$TMP/s5" && break
  sleep 0.1
done
have_samples "$TMP/s5" <<< "sparkctl_gpu_xid_errors_total{$U,xid=\"79\"} 3"
[ "$has_promtool" = 0 ] || promlint "$TMP/s5"

# HTTP: HEAD, other methods, other paths, the index page.
$HTTP request HEAD "$EXPORTER_URL/metrics" > "$TMP/head"
head -n 1 "$TMP/head" | grep -qx 200 || fail "HEAD /metrics is not 200"
contains "$TMP/head" "content-type: text/plain; version=0.0.4; charset=utf-8"
[ -z "$(sed '1,/^$/d' "$TMP/head")" ] || fail "HEAD returned a body"
for m in POST PUT DELETE PATCH OPTIONS TRACE; do
  $HTTP request "$m" "$EXPORTER_URL/metrics" > "$TMP/m"
  head -n 1 "$TMP/m" | grep -qx 405 || { cat "$TMP/m" >&2; fail "$m /metrics is not 405"; }
  contains "$TMP/m" "allow: GET, HEAD"
done
for p in /nope /metrics/x /metricsx /favicon.ico; do
  $HTTP get "$EXPORTER_URL$p" > "$TMP/p"
  head -n 1 "$TMP/p" | grep -qx 404 || { cat "$TMP/p" >&2; fail "GET $p is not 404"; }
done
$HTTP get "$EXPORTER_URL/" > "$TMP/index"
head -n 1 "$TMP/index" | grep -qx 200 || fail "GET / is not 200"
contains "$TMP/index" 'content-type: text/html; charset=utf-8'
contains "$TMP/index" '<a href="/metrics">'

# The port is taken: one line naming the address, exit 1.
port=${EXPORTER_URL##*:}
expect 1 "$SPARKCTL" exporter --no-gpu --root "$R" --listen "127.0.0.1:$port"
[ "$(cat "$TMP/err")" = "sparkctl exporter: cannot listen on 127.0.0.1:$port: Address already in use" ] ||
  { cat "$TMP/err" >&2; fail "wrong message for a taken port"; }
exporter_stop

# The 8-GPU server: an Xid names its GPU.
: > "$XID"
LD_LIBRARY_PATH=$FAKE_LIBDIR SPARKCTL_FAKE_GPU=h100x8 SPARKCTL_FAKE_XID_FILE=$XID \
  exporter_start --root "$FIXTURES/ib-server"
printf '3 48\n' >> "$XID"
G3='gpu="3",uuid="GPU-e5f6a7b8-0100-4800-8000-000000610000"'
for i in $(seq 100); do
  scrape "$TMP/h1"
  grep -qF "sparkctl_gpu_xid_errors_total{$G3,xid=\"48\"} 1" "$TMP/h1" && break
  sleep 0.1
done
have_samples "$TMP/h1" <<< "sparkctl_gpu_xid_errors_total{$G3,xid=\"48\"} 1"
[ "$(grep -c '^sparkctl_gpu_xid_errors_total{' "$TMP/h1")" = 1 ] || fail "Xids on other GPUs"
exporter_stop

# --- Without NVML: the node's other metrics, and the gap said once.
mkdir "$TMP/nolib"
expect 0 env LD_LIBRARY_PATH="$TMP/nolib" "$SPARKCTL" exporter --once --root "$R"
have_samples "$TMP/out" <<< "sparkctl_gpu_nvml_up 0"
lacks "$TMP/out" 'collector="gpu"'
expect 0 "$SPARKCTL" exporter --once --no-gpu --root "$R"
lacks "$TMP/out" 'sparkctl_gpu_'
LD_LIBRARY_PATH=$TMP/nolib exporter_start --root "$R"
grep -q '^sparkctl exporter: no GPU metrics: .*libnvidia-ml.so.1' "$EXPORTER_ERR" ||
  { cat "$EXPORTER_ERR" >&2; fail "no note that GPU metrics are missing"; }
kill -TERM "$EXPORTER_PID"
wait "$EXPORTER_PID" || fail "exit status $? on SIGTERM"

# --- Bad command lines: one clear line (and the pointer to --help), exit 2.
for bad in "nonsense" "127.0.0.1" "localhost:9877" "127.0.0.1:99999" "::1:80" "[::1]80"; do
  expect 2 "$SPARKCTL" exporter --no-gpu --listen "$bad"
  [ "$(head -n 1 "$TMP/err")" = "sparkctl exporter: invalid --listen '$bad': expected ADDR:PORT" ] ||
    { cat "$TMP/err" >&2; fail "wrong message for --listen $bad"; }
done
expect 2 "$SPARKCTL" exporter --no-gpu extra
contains "$TMP/err" "sparkctl exporter: unexpected argument 'extra'"
expect 2 "$SPARKCTL" exporter --no-gpu --max-connections 0
expect 2 "$SPARKCTL" exporter --bogus
expect 1 "$SPARKCTL" exporter --no-gpu --once --root "$TMP/none"
[ "$(cat "$TMP/err")" = "sparkctl exporter: cannot use '$TMP/none' as the root: No such file or directory" ] ||
  { cat "$TMP/err" >&2; fail "wrong message for a missing root"; }
[ ! -s "$TMP/out" ] || fail "output for a missing root"
expect 0 "$SPARKCTL" exporter --help
contains "$TMP/out" "--listen ADDR:PORT"
