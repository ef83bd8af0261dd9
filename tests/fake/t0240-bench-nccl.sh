#!/usr/bin/env bash
# sparkctl bench nccl end to end on the stand-in libcuda/libnccl (one rank:
# "device" memory is host memory and a collective is a copy): loading,
# the sweep, the check, the nccl-tests table, JSON, the memory bound, the
# timeout and abort, NCCL's errors and log, the ways ranks are started,
# and every bad command line.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"
unset SPARKCTL_FAKE_NCCL_HANG_BYTES SPARKCTL_FAKE_NCCL_HANG_AFTER SPARKCTL_FAKE_NCCL_CORRUPT SPARKCTL_FAKE_NCCL_ASYNC_ERROR \
  SPARKCTL_FAKE_NCCL_NET SPARKCTL_FAKE_CUDA_FREE_MIB SPARKCTL_FAKE_CUDA_NO_PTX NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS \
  RANK WORLD_SIZE MASTER_ADDR MASTER_PORT LOCAL_RANK SPARKCTL_ROOT
export TMPDIR=$TMP

# rows FILE: the table's data rows (lines not starting with '#').
rows() { grep -v '^#' "$1" || true; }

# table_ok FILE NROWS: NROWS rows in nccl-tests' columns, every #wrong 0,
# and the footer of a clean run.
table_ok() {
  python3 - "$1" "$2" << 'PY' || fail "$1: not the table expected"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l for l in lines if not l.startswith("#")]
assert len(rows) == int(sys.argv[2]), (len(rows), rows)
num = r"\s*-?[0-9.e+]+"
# nccl-tests' "    N/A" is one column narrower than its "  %6g".
half = r"  (.{7})  (.{6})  (.{6})(  .{6}|    N/A)"
pat = re.compile(r"^ *\d{1,12}  +\d{1,12}  +\S{1,8}  +\S{1,6}  +-?\d+" + half * 2 + "$")
for r in rows:
    m = pat.match(r)
    assert m, "bad row: %r" % r
    width = 12 + 2 + 12 + 2 + 8 + 2 + 6 + 2 + 6 + 2 * (2 + 7 + 2 + 6 + 2 + 6 + 2 + 6)
    assert len(r) == width - r.count("N/A"), r
    for g in (4, 8):
        assert m.group(g).strip() in ("0", "N/A"), r
assert "# Out of bounds values : 0 OK" in lines
assert any(l.startswith("# Avg bus bandwidth    : ") for l in lines)
PY
}

# --- Missing pieces: exit 3 naming what is missing, never a crash.
expect 3 env LD_LIBRARY_PATH="$NO_LIBDIR" "$SPARKCTL" bench nccl
contains "$TMP/err" "no GPU to run on"
contains "$TMP/err" "libcuda.so.1"
# A libnccl.so.2 without the collective API (the broken stand-in).
mkdir "$TMP/no-nccl"
ln -s "$FAKE_LIBDIR/libcuda.so.1" "$TMP/no-nccl/libcuda.so.1"
ln -s "$BROKEN_LIBDIR/libnccl.so.2" "$TMP/no-nccl/libnccl.so.2"
expect 3 env LD_LIBRARY_PATH="$TMP/no-nccl" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" bench nccl
contains "$TMP/err" "libnccl.so.2"
expect 3 fake cuda-no-device "$SPARKCTL" bench nccl
contains "$TMP/err" "no GPU to run on"

# --- A sweep on the one GPU of a GB10: 8 B .. 1 MiB is 18 sizes.
expect 0 fake gb10 "$SPARKCTL" bench nccl -b 8 -e 1M
quiet
table_ok "$TMP/out" 18
contains "$TMP/out" "# Collective test starting: all_reduce_perf"
contains "$TMP/out" "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0"
grep -qE '^#  Rank  0 Group  0 Pid +[0-9]+ on +[^ ]+ device  0 \[000f:01:00\] NVIDIA GB10$' "$TMP/out" ||
  fail "no device line for the GB10"
contains "$TMP/out" "# NCCL path            : network Socket lo"
contains "$TMP/out" "# Collective test concluded: all_reduce_perf"
rows "$TMP/out" | head -1 | grep -qE '^ +8 +2 +float +sum +-1 ' || fail "first row is not 8 bytes of float"
rows "$TMP/out" | tail -1 | grep -qE '^ +1048576 +262144 +float +sum +-1 ' || fail "last row is not 1 MiB"
# NCCL's log went to a file of ours, and is gone.
[ -z "$(ls "$TMP" | grep sparkctl-nccl)" ] || fail "NCCL's log file was left behind"

# -i: additive steps.
expect 0 fake gb10 "$SPARKCTL" bench nccl -b 1K -e 4K -i 1K
table_ok "$TMP/out" 4
contains "$TMP/out" "step: 1024(bytes)"

# --- Every collective, JSON beside the table.
expect 0 fake gb10 "$SPARKCTL" bench nccl --op all -b 64 -e 64K -f 4 -o "$TMP/all.json"
quiet
[ "$(grep -c '^# Collective test starting' "$TMP/out")" = 7 ] || fail "not 7 collectives"
for t in all_reduce all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  contains "$TMP/out" "# Collective test concluded: ${t}_perf"
done
[ "$(stat -c %a "$TMP/all.json")" = 644 ] || fail "JSON mode is not 644"
json_check "$TMP/all.json" << 'EOF2'
d["ok"] => True
d["out_of_bounds"] => 0
d["config"]["nranks"] => 1
d["config"]["maximum_bytes"] => 65536
d["config"]["iterations"] => 20
d["devices"][0]["name"] => NVIDIA GB10
[t["op"] for t in d["tests"]] => ['all_reduce', 'all_gather', 'reduce_scatter', 'broadcast', 'reduce', 'alltoall', 'sendrecv']
[len(t["results"]) for t in d["tests"]] => [6, 6, 6, 6, 6, 6, 6]
d["tests"][0]["results"][0]["size_bytes"] => 64
d["tests"][0]["results"][0]["out_of_place"]["wrong"] => 0
d["tests"][0]["results"][0]["out_of_place"]["iterations"] => 20
d["tests"][6]["results"][0]["in_place"]["wrong"] => None
d["tests"][5]["results"][0]["in_place"]["wrong"] => None
d["tests"][5]["results"][0]["out_of_place"]["wrong"] => 0
d["tests"][3]["results"][0]["root"] => 0
d["tests"][3]["results"][0]["redop"] => none
d["tests"][0]["nccl_path"][0]["summary"].startswith("network Socket") => True
EOF2
# --json: the JSON alone on stdout.
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 4K --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"]' "$TMP/out" ||
  fail "--json did not print JSON alone"

# --- Every type and reduction is checked exactly, by the check kernels (which
# the stand-in driver runs through sparkctl's model of them) and on the host.
for where in gpu host; do
  for t in int8 uint8 int32 uint32 int64 uint64 half float double bfloat16; do
    expect 0 fake gb10 "$SPARKCTL" bench nccl --check-on $where --op all_reduce,reduce_scatter,alltoall -d $t -b 16 -e 4K
    table_ok "$TMP/out" 27
  done
  for op in sum prod max min avg; do
    expect 0 fake gb10 "$SPARKCTL" bench nccl --check-on $where --op all_reduce,reduce --redop $op -d half -e 4K
    rows "$TMP/out" | grep -qE "^ +4096 +2048 +half +$op +-1 " || fail "no 4 KiB row of half $op"
  done
done
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 4K -o "$TMP/where.json"
contains "$TMP/out" "# Check: on the GPU"
json_check "$TMP/where.json" << 'EOF2'
d["config"]["check_on"] => gpu
"check_note" in d["config"] => False
EOF2
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 4K -c 0 -o "$TMP/where.json"
lacks "$TMP/out" "# Check:"
json_check "$TMP/where.json" << 'EOF2'
d["config"]["check_on"] => None
EOF2
# A driver that will not compile the kernels: the check runs on the host, and says why.
expect 0 fake gb10 env SPARKCTL_FAKE_CUDA_NO_PTX=1 "$SPARKCTL" bench nccl -e 4K -o "$TMP/where.json"
contains "$TMP/out" "# Check: on the host (the CUDA driver did not compile the check kernels: the provided PTX was compiled with an unsupported toolchain.: ptxas application ptx input, line 1; fatal   : Unsupported .version)"
json_check "$TMP/where.json" << 'EOF2'
d["config"]["check_on"] => host
d["config"]["check_note"].startswith("the CUDA driver did not compile") => True
EOF2
table_ok "$TMP/out" 10
# ... unless the GPU was asked for: unavailable, exit 3.
expect 3 fake gb10 env SPARKCTL_FAKE_CUDA_NO_PTX=1 "$SPARKCTL" bench nccl -e 4K --check-on gpu
contains "$TMP/err" "--check-on gpu: the CUDA driver did not compile the check kernels"
expect 2 fake gb10 "$SPARKCTL" bench nccl --check-on cpu

# --- Wrong results: #wrong per row, FAILED, exit 4, JSON says so; the
# same count from the host check.
expect 4 fake gb10 env SPARKCTL_FAKE_NCCL_CORRUPT=1024 "$SPARKCTL" bench nccl --check-on host -b 256 -e 4K
contains "$TMP/out" "# Out of bounds values : 6 FAILED"
expect 4 fake gb10 env SPARKCTL_FAKE_NCCL_CORRUPT=1024 "$SPARKCTL" bench nccl -b 256 -e 4K \
  -o "$TMP/bad.json"
contains "$TMP/err" "some results were wrong"
rows "$TMP/out" | grep -E '^ +256 ' | grep -qE ' 0 +[0-9.]+ +[0-9.]+ +[0-9.]+ +0$' || fail "256 B should be right"
rows "$TMP/out" | grep -qE '^ +1024 .* 1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +1$' || fail "1 KiB should have 1 wrong value per placement"
contains "$TMP/out" "# Out of bounds values : 6 FAILED"
json_check "$TMP/bad.json" << 'EOF2'
d["ok"] => False
d["out_of_bounds"] => 6
d["tests"][0]["results"][2]["out_of_place"]["wrong"] => 1
EOF2

# --- A collective that never finishes: aborted at --op-timeout, exit 5.
start=$(date +%s)
expect 5 fake gb10 env SPARKCTL_FAKE_NCCL_HANG_BYTES=65536 "$SPARKCTL" bench nccl -b 1K -e 1M --op-timeout 1 -o "$TMP/hang.json"
[ $(( $(date +%s) - start )) -lt 15 ] || fail "the timeout took too long"
contains "$TMP/err" "did not finish within 1 s"
contains "$TMP/err" "sparkctl doctor"
[ ! -e "$TMP/hang.json" ] || fail "a JSON file was written for a run that failed"

# An asynchronous NCCL error ends the run with NCCL's message.
expect 1 fake gb10 env SPARKCTL_FAKE_NCCL_ASYNC_ERROR=1 "$SPARKCTL" bench nccl -e 1M --op-timeout 5
contains "$TMP/err" "remote peer closed connection"

# --- The memory bound: on an 80 GiB H100 NCCL keeps 5 GiB, and the send and
# receive buffers share the rest: 5200 MiB free leaves 40 MiB per buffer.
expect 2 fake h100x8 env SPARKCTL_FAKE_CUDA_FREE_MIB=5200 "$SPARKCTL" bench nccl --gpus 1 -e 64M
contains "$TMP/err" "-e 67108864 exceeds the 41943040 bytes that free memory allows"
contains "$TMP/err" "--force"
expect 0 fake h100x8 env SPARKCTL_FAKE_CUDA_FREE_MIB=5200 "$SPARKCTL" bench nccl --gpus 1 -b 1M -c 0
contains "$TMP/out" "# Reducing maxBytes to 41943040 due to memory limitation"
contains "$TMP/out" "validation: 0"
rows "$TMP/out" | tail -1 | grep -qE '^ +33554432 ' || fail "the sweep should end at 32 MiB"
rows "$TMP/out" | grep -q 'N/A' || fail "-c 0 should print N/A"
expect 0 fake h100x8 env SPARKCTL_FAKE_CUDA_FREE_MIB=5200 "$SPARKCTL" bench nccl --gpus 1 -b 64M -e 64M --force -n 1 -w 0 -c 0
table_ok "$TMP/out" 1

# --- NCCL's path, as its log tells it.
expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_NET=IB "$SPARKCTL" bench nccl -e 4K
contains "$TMP/out" "# NCCL path            : network IB rocep1s0f1:1/RoCE roceP2p1s0f1:1/RoCE, GPUDirect RDMA off"
# The caller's NCCL_DEBUG is left alone; the path is then not ours to read.
expect 0 fake gb10 env NCCL_DEBUG=WARN "$SPARKCTL" bench nccl -e 4K
contains "$TMP/out" "# NCCL path            : not read: NCCL_DEBUG is set"

# --- NCCL set up as nccl-tests does: from NCCL 2.28 the communicator has
# nvlinkCentricSched set (NCCL's log says so), and the buffers come from
# ncclMemAlloc (the stand-in libcuda reports any not freed on stderr).
expect 0 fake gb10 env NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$TMP/nccl-228.log" "$SPARKCTL" bench nccl -e 4K -o "$TMP/228.json"
quiet
contains "$TMP/nccl-228.log" "NCCL INFO Comm config nvlinkCentricSched set to 1"
json_check "$TMP/228.json" << 'EOF2'
d["config"]["allocator"] => ncclMemAlloc
EOF2
# Before 2.28 NCCL has no such field: plain ncclCommInitRank.
expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_VERSION=22703 NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$TMP/nccl-227.log" \
  "$SPARKCTL" bench nccl -e 4K
quiet
contains "$TMP/nccl-227.log" "NCCL version 2.27.3"
! grep -q nvlinkCentricSched "$TMP/nccl-227.log" || fail "NCCL 2.27 was given a 2.28 config"
# ncclMemAlloc failing (device memory short): NCCL's reason, exit 1, nothing left allocated.
expect 1 fake gb10 env SPARKCTL_FAKE_NCCL_MEMALLOC_FAIL=1 "$SPARKCTL" bench nccl -e 4K
contains "$TMP/err" "ncclMemAlloc (send buffer) failed"
contains "$TMP/err" "out of memory"
[ "$(grep -c . "$TMP/err")" = 1 ] || fail "one error line expected"

# --- -C 1: the time columns are the host's time to issue an operation
# (nccl-tests' cputime).  Each collective here keeps its stream busy for
# 20 ms (one after the other), so 5 of them take 20 ms each to complete, while issuing
# one (a copy of a few KiB) takes far less.  The JSON has both always.
expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_BUSY_US=20000 "$SPARKCTL" bench nccl -b 1K -e 4K -n 5 -w 0 -C 1 \
  -o "$TMP/cpu.json"
quiet
contains "$TMP/out" "#       size         count      type   redop    root  cputime   algbw   busbw  #wrong  cputime   algbw   busbw  #wrong"
json_get "$TMP/cpu.json" 'all(r[h]["time_us"] >= 4000 and r[h]["cpu_time_us"] < r[h]["time_us"] / 2
  for r in d["tests"][0]["results"] for h in ("out_of_place", "in_place"))' |
  grep -qx True || fail "cpu_time_us should be well below time_us on a busy stream"
cpu=$(json_get "$TMP/cpu.json" '"%.2f" % d["tests"][0]["results"][0]["out_of_place"]["cpu_time_us"]')
rows "$TMP/out" | head -1 | awk -v c="$cpu" '$6 != c { exit 1 }' || fail "the table's cputime is not the JSON's ($cpu)"
json_check "$TMP/cpu.json" << 'EOF2'
d["config"]["report_cputime"] => True
EOF2

# --- --bind: where each rank runs, in the JSON as a kernel CPU list.  The
# stand-in GPU has no sysfs node here, so its NUMA node is every CPU the
# rank may use.  cpulist [CPU...]: the list of those CPUs (default: this
# shell's); siblings CPU: the CPUs of its core.
cpulist() {
  python3 - "$@" << 'PY'
import os, sys
cpus = sorted(int(c) for c in sys.argv[1:]) or sorted(os.sched_getaffinity(0))
runs = []
for c in cpus:
    if runs and runs[-1][1] == c - 1:
        runs[-1][1] = c
    else:
        runs.append([c, c])
print(",".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in runs))
PY
}
siblings() {
  python3 - "$1" << 'PY'
import os, sys
cpu, allowed = int(sys.argv[1]), os.sched_getaffinity(0)
try:
    text = open("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list" % cpu).read()
    sib = set()
    for part in text.strip().split(","):
        a, _, b = part.partition("-")
        sib.update(range(int(a), int(b or a) + 1))
except OSError:
    sib = {cpu}
print(" ".join(str(c) for c in sorted(sib & allowed)))
PY
}
allowed=$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')
first=${allowed%% *}
last=${allowed##* }
# core, the default: the first core (its CPUs, SMT siblings too) of those
# the rank may use.
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 1K -o "$TMP/core.json"
quiet
json_check "$TMP/core.json" << EOF2
d["config"]["bind"] => core
d["devices"][0]["cpus"] => $(cpulist $(siblings "$first"))
EOF2
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 1K --bind numa -o "$TMP/bind.json"
quiet
json_check "$TMP/bind.json" << EOF2
d["config"]["bind"] => numa
d["devices"][0]["cpus"] => $(cpulist)
EOF2
if [ "$first" != "$last" ]; then
  # The choice is made within the caller's binding, and none keeps it whole.
  expect 0 fake gb10 taskset -c "$last" "$SPARKCTL" bench nccl -e 1K --bind core -o "$TMP/core1.json"
  [ "$(json_get "$TMP/core1.json" 'd["devices"][0]["cpus"]')" = "$last" ] || fail "--bind core left taskset's CPU"
  expect 0 fake gb10 taskset -c "$first,$last" "$SPARKCTL" bench nccl -e 1K --bind none -o "$TMP/none.json"
  [ "$(json_get "$TMP/none.json" 'd["devices"][0]["cpus"]')" = "$(cpulist "$first" "$last")" ] ||
    fail "--bind none changed the binding"

  # The host's files below SPARKCTL_ROOT: a hybrid CPU whose last CPU is a
  # performance core, one thread a core, and the GPU's NUMA node (the stand-in
  # GB10 at 000f:01:00.0) of the first and last CPUs.
  host=$TMP/host
  mkdir -p "$host/sys/bus/pci/devices/000f:01:00.0" "$host/proc"
  echo "$first,$last" > "$host/sys/bus/pci/devices/000f:01:00.0/local_cpulist"
  for c in $allowed; do
    mkdir -p "$host/sys/devices/system/cpu/cpu$c/topology"
    echo "$c" > "$host/sys/devices/system/cpu/cpu$c/topology/thread_siblings_list"
    echo 420 > "$host/sys/devices/system/cpu/cpu$c/cpu_capacity"
  done
  echo 1024 > "$host/sys/devices/system/cpu/cpu$last/cpu_capacity"
  cp /proc/meminfo "$host/proc/meminfo"
  expect 0 fake gb10 env SPARKCTL_ROOT="$host" "$SPARKCTL" bench nccl -e 1K -o "$TMP/fast.json"
  quiet
  [ "$(json_get "$TMP/fast.json" 'd["devices"][0]["cpus"]')" = "$last" ] ||
    fail "--bind core did not take the performance core"
  expect 0 fake gb10 env SPARKCTL_ROOT="$host" "$SPARKCTL" bench nccl -e 1K --bind numa -o "$TMP/node.json"
  [ "$(json_get "$TMP/node.json" 'd["devices"][0]["cpus"]')" = "$(cpulist "$first" "$last")" ] ||
    fail "--bind numa is not the GPU's local_cpulist"
  # Without capacities, cpufreq's highest frequency tells the cores apart.
  for c in $allowed; do
    rm "$host/sys/devices/system/cpu/cpu$c/cpu_capacity"
    mkdir "$host/sys/devices/system/cpu/cpu$c/cpufreq"
    echo 2800000 > "$host/sys/devices/system/cpu/cpu$c/cpufreq/cpuinfo_max_freq"
  done
  echo 3900000 > "$host/sys/devices/system/cpu/cpu$last/cpufreq/cpuinfo_max_freq"
  expect 0 fake gb10 env SPARKCTL_ROOT="$host" "$SPARKCTL" bench nccl -e 1K -o "$TMP/freq.json"
  [ "$(json_get "$TMP/freq.json" 'd["devices"][0]["cpus"]')" = "$last" ] ||
    fail "--bind core did not take the fastest core by cpufreq"
  # One CPU without a figure: none of them count, CPU order decides.
  rm "$host/sys/devices/system/cpu/cpu$first/cpufreq/cpuinfo_max_freq"
  expect 0 fake gb10 env SPARKCTL_ROOT="$host" "$SPARKCTL" bench nccl -e 1K -o "$TMP/order.json"
  [ "$(json_get "$TMP/order.json" 'd["devices"][0]["cpus"]')" = "$first" ] ||
    fail "--bind core compared figures it did not have for every CPU"
fi

# --- Unified memory (GB10): the bound is MemAvailable, not the device's free
# memory.  5.5 GiB available less NCCL's 5 GiB leaves 512 MiB for the send
# and receive buffers: 256 MiB each.  The host check's two buffers share it
# too: 128 MiB each.
mkdir -p "$TMP/small/proc"
printf 'MemTotal:       131072000 kB\nMemFree:          1000000 kB\nMemAvailable:     5767168 kB\n' > "$TMP/small/proc/meminfo"
expect 2 fake gb10 env SPARKCTL_ROOT="$TMP/small" "$SPARKCTL" bench nccl -b 1G -e 1G
contains "$TMP/err" "-e 1073741824 exceeds the 268435456 bytes that free memory allows"
expect 0 fake gb10 env SPARKCTL_ROOT="$TMP/small" "$SPARKCTL" bench nccl -b 256M -n 1 -w 0
contains "$TMP/out" "# Reducing maxBytes to 268435456 due to memory limitation"
table_ok "$TMP/out" 1
expect 0 fake gb10 env SPARKCTL_ROOT="$TMP/small" "$SPARKCTL" bench nccl -b 128M -n 1 -w 0 --check-on host
contains "$TMP/out" "# Reducing maxBytes to 134217728 due to memory limitation"
table_ok "$TMP/out" 1
# Without the check, two buffers: 256 MiB each.
expect 0 fake gb10 env SPARKCTL_ROOT="$TMP/small" "$SPARKCTL" bench nccl -b 256M -n 1 -w 0 -c 0
contains "$TMP/out" "# Reducing maxBytes to 268435456 due to memory limitation"
# --root DIR is the same tree as SPARKCTL_ROOT, for this process and the ranks it starts.
expect 0 fake gb10 "$SPARKCTL" bench nccl --root "$TMP/small" -b 128M -n 1 -w 0 --check-on host
contains "$TMP/out" "# Reducing maxBytes to 134217728 due to memory limitation"
# A root that cannot be read is an error, not a silent fall back to "/".
expect 1 fake gb10 env SPARKCTL_ROOT="$TMP/nowhere" "$SPARKCTL" bench nccl -e 1K
contains "$TMP/err" "cannot open the host's files below $TMP/nowhere"
expect 1 fake gb10 "$SPARKCTL" bench nccl --root "$TMP/nowhere" -e 1K
contains "$TMP/err" "cannot open the host's files below $TMP/nowhere"

# --- SPARKCTL_BENCH_STEPS=1: each rank says when its steps ended, in order.
expect 0 fake gb10 env SPARKCTL_BENCH_STEPS=1 "$SPARKCTL" bench nccl -e 1K
grep -qE '^sparkctl bench nccl: rank 0 steps \(s from its start\): libraries [0-9.]+, buffers [0-9.]+, communicator [0-9.]+, sweep [0-9.]+, destroyed [0-9.]+, end [0-9.]+$' "$TMP/err" ||
  fail "no steps line"
sed -n 's/.*: //p' "$TMP/err" | tr ',' '\n' | awk '{ if ($2 < last) exit 1; last = $2 }' || fail "steps out of order"
table_ok "$TMP/out" 8
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 1K
lacks "$TMP/err" "steps"

# --- The end of a run.  One that ended well leaves its communicator to the
# end of the process, which skips the libraries' exit handlers (they would
# tear CUDA down under NCCL's threads); SPARKCTL_BENCH_DESTROY=1 destroys
# it first, as nccl-tests does; a failed one aborts it.  The stand-in
# libnccl traces each (SPARKCTL_FAKE_NCCL_TRACE).
rm -f "$TMP/trace"
expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_TRACE="$TMP/trace" "$SPARKCTL" bench nccl -e 1K
table_ok "$TMP/out" 8
[ ! -e "$TMP/trace" ] || fail "a run that ended well destroyed its communicator or ran the exit handlers: $(cat "$TMP/trace")"
# Also with wrong results (exit 4), which end well as a run.
expect 4 fake gb10 env SPARKCTL_FAKE_NCCL_TRACE="$TMP/trace" SPARKCTL_FAKE_NCCL_CORRUPT=1024 "$SPARKCTL" bench nccl -b 256 -e 4K
[ ! -e "$TMP/trace" ] || fail "a run with wrong results destroyed its communicator: $(cat "$TMP/trace")"
expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_TRACE="$TMP/trace" SPARKCTL_BENCH_DESTROY=1 "$SPARKCTL" bench nccl -e 1K
table_ok "$TMP/out" 8
[ "$(cat "$TMP/trace")" = "ncclCommDestroy
exit handler: 0 live" ] || fail "SPARKCTL_BENCH_DESTROY=1: $(cat "$TMP/trace")"
rm -f "$TMP/trace"
expect 1 fake gb10 env SPARKCTL_FAKE_NCCL_TRACE="$TMP/trace" SPARKCTL_FAKE_NCCL_ASYNC_ERROR=1 "$SPARKCTL" bench nccl -e 1M --op-timeout 5
[ "$(cat "$TMP/trace")" = "ncclCommAbort
exit handler: 0 live" ] || fail "a failed run: $(cat "$TMP/trace")"
rm -f "$TMP/trace"

# --- Adaptive iterations.  Short operations: fixed mode's loop, as it is.
expect 0 fake gb10 "$SPARKCTL" bench nccl -e 64K --precision 5% -o "$TMP/adaptive.json"
contains "$TMP/out" "# Adaptive iterations: where 20 operations take 20 ms or more, the loop stops once the 95% confidence half-width of the time is within 5% and its start weighs under 0.5%"
table_ok "$TMP/out" 14
json_get "$TMP/adaptive.json" 'all(r[h]["iterations"] == 20 for r in d["tests"][0]["results"] for h in ("out_of_place", "in_place"))' |
  grep -qx True || fail "short operations should run fixed mode's 20"
# Long operations (100 ms each here, -n 10): one loop read as it runs,
# three issued ahead; steady, it stops after 3 operations past the first
# (the first's start, a few microseconds, is far under 0.5% of 400 ms), and
# its figure is fixed mode's for those 4.  The events are left live with
# the rest; destroyed with SPARKCTL_BENCH_DESTROY=1 (the stand-in reports
# any that are not).
for destroy in 0 1; do
  expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_BUSY_US=100000 SPARKCTL_BENCH_DESTROY=$destroy "$SPARKCTL" bench nccl -b 4K -e 4K -w 0 -n 10 --precision 2% -o "$TMP/adaptive.json"
  [ ! -s "$TMP/err" ] || fail "stderr: $(cat "$TMP/err")"
  json_get "$TMP/adaptive.json" 'all(d["tests"][0]["results"][0][h]["iterations"] == 4 for h in ("out_of_place", "in_place"))' |
    grep -qx True || fail "100 ms operations should stop after 4: $(cat "$TMP/adaptive.json")"
  json_get "$TMP/adaptive.json" 'all(99900 <= d["tests"][0]["results"][0][h]["time_us"] < 110000 for h in ("out_of_place", "in_place"))' |
    grep -qx True || fail "the figure should be the operations' 100 ms: $(cat "$TMP/adaptive.json")"
done
# A collective that never ends inside the loop (the communicator's 4th: the
# loop's third, issued with the first two, which end): the rank waits on that
# operation's event, gives up at --op-timeout, aborts the communicator and
# exits 5, as a hang outside the loop does.
expect 5 fake gb10 env SPARKCTL_FAKE_NCCL_BUSY_US=100000 SPARKCTL_FAKE_NCCL_HANG_AFTER=3 SPARKCTL_FAKE_NCCL_TRACE="$TMP/trace" \
  "$SPARKCTL" bench nccl -b 4K -e 4K -w 0 -n 10 --precision 2% --op-timeout 1
contains "$TMP/err" "all_reduce of 4096 bytes did not finish within 1 s on rank 0"
[ "$(cat "$TMP/trace")" = "ncclCommAbort
exit handler: 0 live" ] || fail "a hang in the adaptive loop: $(cat "$TMP/trace")"
rm -f "$TMP/trace"
# Fixed mode counts all 10.
expect 0 fake gb10 env SPARKCTL_FAKE_NCCL_BUSY_US=100000 "$SPARKCTL" bench nccl -b 4K -e 4K -w 0 -n 10 -o "$TMP/fixed.json"
json_get "$TMP/fixed.json" 'd["tests"][0]["results"][0]["out_of_place"]["iterations"]' | grep -qx 10 ||
  fail "fixed mode should time 10"

# --- The ways a rank is started: by hand, and under sparkctl launch.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect 0 fake gb10 "$SPARKCTL" bench nccl --rank 0 --world-size 1 --rendezvous 127.0.0.1:$port -e 4K
table_ok "$TMP/out" 10
expect 0 fake gb10 env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
  "$SPARKCTL" bench nccl -e 4K
table_ok "$TMP/out" 10
expect 0 fake gb10 "$SPARKCTL" launch -q --no-env -N 1 -- "$SPARKCTL" bench nccl -e 4K
contains "$TMP/out" "[0] # Out of bounds values : 0 OK"

# Two local ranks: the stand-in NCCL takes one, so both fail, rank 0 says
# why, and no rank is left behind.
expect 1 fake h100x8 "$SPARKCTL" bench nccl --gpus 2 -e 4K --op-timeout 10
contains "$TMP/err" "ncclCommInitRankConfig failed"
contains "$TMP/err" "one rank"
[ "$(grep -c . "$TMP/err")" = 1 ] || fail "one error line expected"
! pgrep -f "bench nccl .*--rank=1" > /dev/null || fail "rank 1 outlived the run"

# A rank that never comes: the others give up at --op-timeout.
expect 1 fake gb10 "$SPARKCTL" bench nccl --rank 0 --world-size 2 --rendezvous 127.0.0.1:$port --op-timeout 1
contains "$TMP/err" "did not connect"

# --- Bad command lines: one line, exit 2.
bad() {
  expect 2 fake gb10 "$SPARKCTL" bench nccl "$@"
  contains "$TMP/err" "$1"
}
expect 2 fake gb10 "$SPARKCTL" bench nccl --op allreduce
contains "$TMP/err" "bad --op 'allreduce'"
expect 2 fake gb10 "$SPARKCTL" bench nccl -b 1M -e 1K
contains "$TMP/err" "-b 1M is larger than -e 1K"
for args in "-e 0" "-b x" "-e 1T" "-f 1" "-n 0" "-c 2" "-C 2" "--bind socket" "--precision 0" "--precision 200%" \
  "--dtype fp8" "--redop mulsum" "--op-timeout 0" "-f 2 -i 1K" "--rank 0" "--rank 2 --world-size 2 --rendezvous h:1" \
  "--rank 0 --world-size 1 --rendezvous nohost" "--gpus 2" "--root-rank 1" "--device 0" "extra"; do
  # shellcheck disable=SC2086
  expect 2 fake gb10 "$SPARKCTL" bench nccl $args
  [ "$(grep -c . "$TMP/err")" -le 2 ] || fail "bench nccl $args: more than a line of error"
done
# Old names are refused with the new one, never taken for something else.
bad --root 0 && contains "$TMP/err" "--root takes the host's tree, a directory; the root rank is --root-rank"
bad -r 0 && contains "$TMP/err" "option '-r' is now '--root-rank'"
bad --timeout 5 && contains "$TMP/err" "option '--timeout' is now '--op-timeout'"
expect 2 fake gb10 "$SPARKCTL" bench nccl --json -
contains "$TMP/err" "unexpected argument '-'"
expect 2 fake gb10 "$SPARKCTL" bench nccl -o all_reduce
contains "$TMP/err" "-o is --output FILE; the collective is --op"
[ ! -e all_reduce ] || fail "-o all_reduce wrote a file"
expect 2 fake gb10 "$SPARKCTL" bench nccl --json -o "$TMP/both.json"
contains "$TMP/err" "choose one"
expect 2 "$SPARKCTL" bench
expect 2 "$SPARKCTL" bench ncl
contains "$TMP/err" "unknown benchmark 'ncl'"
expect 0 "$SPARKCTL" bench nccl --help
contains "$TMP/out" "usage: sparkctl bench nccl"
