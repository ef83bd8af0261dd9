#!/usr/bin/env bash
# sparkctl top --once on captured trees through the stand-in NVML: exact
# Gb/s figures and flags from counters rewritten between the two samples,
# --json (valid against docs/schemas/top.schema.json), a counter that went
# down, -n, plain output when stdout is no terminal, no NVML, --no-gpu, eight
# H100, the samples 'agent status' prints, nodes (-H, through a stand-in ssh)
# whose answer is no sample, and the errors of bad command lines.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"

A=$TMP/a
B=$TMP/b
fixture_copy spark-1cable "$A"
cp -a "$A" "$B"
P=sys/class/infiniband/rocep1s0f1/ports/1
P2=sys/class/infiniband/roceP2p1s0f1/ports/1
add() { echo $(($(cat "$1") + $2)) > "$1"; }
TOP() { env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" top "$@"; }

# --- Two captures 2 s apart (--then), with the capture's host name: the data counters count 4-byte words.
# The graph is of the link rate: 100 of 200 Gb/s is "+", step 4 of 8.
add "$B/$P/counters/port_xmit_data" 6250000000 # 25 GB in 2 s: 100 Gb/s
add "$B/$P/counters/port_rcv_data" 781250000   # 3.125 GB: 12.5 Gb/s
add "$B/$P/counters/port_xmit_packets" 1000    # traffic, no flag
add "$B/$P/hw_counters/out_of_sequence" 3
add "$B/$P/hw_counters/np_ecn_marked_roce_packets" 7
echo 0 > "$B/$P2/counters/port_xmit_data" # went down: no figure at all
echo 500000000 > "$B/sys/class/net/enP7s7/statistics/rx_bytes"
echo 2 > "$B/sys/class/net/enP7s7/statistics/rx_errors"
expect 0 TOP --once --root "$A" --then "$B" --interval 2
[ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "--once wrote to stderr"; }
cat > "$TMP/want" << 'EOF2'
sparkctl top  spark-01  every 2.0 s  sort name

[spark-01]  memory 6.4/122.4 GiB used, 116.0 GiB available
GPU NAME        UTIL   POWER  TEMP  MEMORY
  0 NVIDIA GB10  37%  11.2 W  45 C  6.4/122.4 GiB unified
PORT           NETDEV        STATE  TX Gb/s RX Gb/s HISTORY          FLAGS
roceP2p1s0f0/1 enP2p1s0f0np0 DOWN      0.00    0.00                .
roceP2p1s0f1/1 enP2p1s0f1np1 ACTIVE       -       -
rocep1s0f0/1   enp1s0f0np0   DOWN      0.00    0.00                .
rocep1s0f1/1   enp1s0f1np1   ACTIVE  100.00   12.50                + np_ecn_marked_roce_packets_received +7, out_of_sequence_packets_received +3
enP7s7         -             up        0.00    2.00                - receive_errs +2
wlP9s9         -             down      0.00    0.00                .
EOF2
same "$TMP/want" "$TMP/out"

# --sort traffic: the busiest port first; the one without a figure last.
expect 0 TOP --once --root "$A" --then "$B" --interval 2 --sort traffic
sed -n '/^PORT/,$p' "$TMP/out" | awk '{print $1}' > "$TMP/order"
printf '%s\n' PORT rocep1s0f1/1 enP7s7 roceP2p1s0f0/1 rocep1s0f0/1 wlP9s9 roceP2p1s0f1/1 > "$TMP/want"
same "$TMP/want" "$TMP/order"

# validate FILE...: each line of each file (or the whole file) is a view of
# the schema, and no real has more than 3 decimals.
validate() {
  /usr/bin/python3 - "$SRCDIR/docs/schemas/top.schema.json" "$@" << 'EOF2' || fail "not valid: $*"
import json, re, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
for path in sys.argv[2:]:
    text = open(path).read()
    docs = [json.loads(text)] if text.startswith("{\n") else [json.loads(l) for l in text.splitlines()]
    assert docs, path
    for d in docs:
        jsonschema.validate(d, schema, cls=jsonschema.Draft7Validator)
    long = re.findall(r"[0-9]+\.[0-9]{4,}", text)
    assert not long, "floats not rounded: %s" % long[:3]
EOF2
}

# --json: the same figures, and the flags by counter.
expect 0 TOP --once --json --root "$A" --then "$B" --interval 2
cp "$TMP/out" "$TMP/top.json"
validate "$TMP/top.json"
[ "$(json_get "$TMP/top.json" '(d["schema_version"], d["interval_seconds"], d["nodes"][0]["sample_interval_seconds"])')" = "(1, 2.0, 2.0)" ] ||
  fail "--json: schema_version, interval_seconds"
[ "$(json_get "$TMP/top.json" '[(p["name"], p["tx_gbps"], p["rx_gbps"], [(f["counter"], f["increase"]) for f in p["flags"]]) for p in d["nodes"][0]["ports"] if p["tx_gbps"] is None or p["tx_gbps"] + p["rx_gbps"] > 0]')" = \
  "[('roceP2p1s0f1/1', None, None, []), ('rocep1s0f1/1', 100.0, 12.5, [('np_ecn_marked_roce_packets_received', 7), ('out_of_sequence_packets_received', 3)]), ('enP7s7', 0.0, 2.0, [('receive_errs', 2)])]" ] ||
  { cat "$TMP/top.json" >&2; fail "--json: wrong ports"; }
[ "$(json_get "$TMP/top.json" '(d["nodes"][0]["host"], d["nodes"][0]["gpus"][0]["memory_used_bytes"], d["nodes"][0]["gpus"][0]["unified_memory"])')" = \
  "('spark-01', 6913855488, True)" ] || fail "--json: wrong GPU memory"
# the keys and units of 'status': an integer index, a ratio
[ "$(json_get "$TMP/top.json" '[(g["index"], g["utilization_ratio"], g["power_watts"], g["temperature_celsius"]) for g in d["nodes"][0]["gpus"]]')" = \
  "[(0, 0.37, 11.25, 45.0)]" ] || fail "--json: wrong GPU keys"
# -n COUNT --json: one JSON document per line
expect 0 TOP -n 2 --json --root "$A" --interval 0.1
[ "$(wc -l < "$TMP/out")" = 2 ] || fail "-n 2 --json: not two lines"
validate "$TMP/out"

# --- Live samples of an unchanging tree: zero rates, no flags; -n repeats.
expect 0 TOP --once --root "$A" --interval 0.2
contains "$TMP/out" "rocep1s0f1/1   enp1s0f1np1   ACTIVE    0.00    0.00                ."
expect 0 TOP -n 3 --root "$A" --interval 0.1
[ "$(grep -c '^sparkctl top ' "$TMP/out")" = 3 ] || fail "-n 3 did not print three views"
contains "$TMP/out" "rocep1s0f1/1   enp1s0f1np1   ACTIVE    0.00    0.00               .."
# stdout not a terminal: plain lines without --once
TOP --root "$A" --interval 0.1 > "$TMP/plain" 2>&1 < /dev/null || fail "plain output failed"
contains "$TMP/plain" "  0 NVIDIA GB10  37%"

# --- No NVML, --no-gpu, and an 8-GPU InfiniBand server.
expect 0 env -u LD_LIBRARY_PATH "$SPARKCTL" top --once --root "$A" --interval 0.1
contains "$TMP/out" "GPU  none: NVML is not available"
expect 0 TOP --once --root "$A" --interval 0.1 --no-gpu
lacks "$TMP/out" "GPU"
contains "$TMP/out" "[spark-01]  memory 6.4/122.4 GiB used"
expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=h100x8 "$SPARKCTL" top --once \
  --root "$FIXTURES/ib-server" --interval 0.1 --sort util
[ "$(grep -c ' NVIDIA H100 80GB HBM3 ' "$TMP/out")" = 8 ] || fail "not eight GPUs"
grep -A1 '^GPU NAME' "$TMP/out" | tail -n 1 | grep -q '^  7 NVIDIA H100 80GB HBM3  57% 307.0 W  47 C  0.2/79.6 GiB$' ||
  { cat "$TMP/out" >&2; fail "--sort util: GPU 7 is not first"; }
contains "$TMP/out" "PORT     STATE  TX Gb/s RX Gb/s HISTORY          FLAGS"

# --- The sample of 'agent status' (top -H reads it): the counters in bytes, as top counts them.
SPARKCTL_ROOT=$B expect 0 env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" agent status
cp "$TMP/out" "$TMP/status.json"
[ "$(json_get "$TMP/status.json" '[(p["port"], p["counters"]["port_data_transmitted_bytes"], p["counters"]["out_of_sequence_packets_received"], p["fabric"]) for p in d["ports"] if p["rdma_device"] == "rocep1s0f1"]')" = \
  "[(1, $((($(cat "$A/$P/counters/port_xmit_data") + 6250000000) * 4)), $(($(cat "$A/$P/hw_counters/out_of_sequence") + 3)), True)]" ] ||
  fail "agent status: wrong port counters"
[ "$(json_get "$TMP/status.json" '[(n["state"], n["counters"]["receive_bytes"], n["counters"]["receive_errs"]) for n in d["netdevs"] if n["name"] == "enP7s7"]')" = \
  "[('up', 500000000, 2)]" ] || fail "agent status: wrong netdev counters"
[ "$(json_get "$TMP/status.json" '(d["gpu_state"], [(g["index"], g["utilization_ratio"], g["unified_memory"]) for g in d["gpus"]])')" = \
  "('ok', [(0, 0.37, True)])" ] || fail "agent status: wrong GPU figures"
SPARKCTL_ROOT=$B expect 0 "$SPARKCTL" agent status --no-gpu
[ "$(json_get "$TMP/out" '(d["gpu_state"], d["gpus"])')" = "('off', [])" ] || fail "agent status --no-gpu"
expect 2 "$SPARKCTL" agent status --bogus

# --- -H through a stand-in ssh: a node whose answer is not a sample is named
# with why, the others are shown, the exit status is 3.
cat > "$TMP/ssh" << 'EOF2'
#!/bin/sh
while [ "$1" != "--" ]; do [ "$1" = -G ] && exit 0; shift; done
host=$2
case $host in
  good) exec sh -c "$3" ;;
  *) cat "$TMP/answer.$host" ;;
esac
EOF2
chmod +x "$TMP/ssh"
printf 'sparkctl_gpu_nvml_up 1\n' > "$TMP/answer.text"
printf '{"gpu_state":"ok","gpus":[{"index":"0\\u001b[2J"}],"ports":[],"netdevs":[]}' > "$TMP/answer.hostile"
printf '{"gpu_state":"ok","gpus":[],"memory_total_bytes":1,"ports":[{"rdma_device":"x","port":1,"counters":{"a":-5}}],"netdevs":[]}' > "$TMP/answer.negative"
printf '[1,2' > "$TMP/answer.cut"
export TMP
SPARKCTL_ROOT=$A SPARKCTL_SSH=$TMP/ssh expect 3 "$SPARKCTL" top --once -H good,text,hostile,negative,cut --interval 0.1 --no-gpu
grep -q '^\[good\]  memory 6.4/122.4 GiB used' "$TMP/out" || { cat "$TMP/out" >&2; fail "-H: the good node is not shown"; }
contains "$TMP/out" "rocep1s0f1/1   enp1s0f1np1   ACTIVE    0.00    0.00"
contains "$TMP/out" "[text]  the remote sparkctl printed no sample: its answer:1:8: '[' or '{' expected near 'sparkctl'"
contains "$TMP/out" "[hostile]  the remote sparkctl printed no usable sample: gpus[0].index: expected an integer from 0 to 65535"
contains "$TMP/out" "[negative]  the remote sparkctl printed no usable sample: ports[0].counters: a value that is not a count"
contains "$TMP/out" "[cut]  the remote sparkctl printed no sample: its answer:1:4: ']' expected near end of file"
SPARKCTL_ROOT=$A SPARKCTL_SSH=$TMP/ssh expect 3 "$SPARKCTL" top --once --json -H good,hostile --interval 0.1 --no-gpu
validate "$TMP/out"
[ "$(json_get "$TMP/out" '[(n["host"], n["error"] is None, "ports" in n) for n in d["nodes"]]')" = \
  "[('good', True, True), ('hostile', False, False)]" ] || fail "-H --json: wrong nodes"

# --- Bad command lines and roots.
expect 2 TOP --once --interval 0
contains "$TMP/err" "sparkctl top: invalid --interval '0': expected 0.1 to 3600 seconds"
expect 2 TOP --once --interval 1s
expect 2 TOP --once --sort power
contains "$TMP/err" "invalid --sort 'power'"
expect 2 TOP --root "$A" --then "$B"
contains "$TMP/err" "--then needs --root and --once"
expect 2 TOP --once -H node0 --root "$A"
expect 2 TOP --once --remote-sparkctl /x
expect 2 TOP --once -n 2
expect 2 TOP --once extra
expect 2 TOP --once -H -x
expect 1 TOP --once --root "$TMP/none"
contains "$TMP/err" "sparkctl top: cannot use '$TMP/none' as the root: No such file or directory"
expect 0 TOP --help
contains "$TMP/out" "sparkctl top (--once | -n COUNT)"
