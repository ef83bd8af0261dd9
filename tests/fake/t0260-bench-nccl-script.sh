#!/usr/bin/env bash
# bench/bench-nccl.sh end to end, on the stand-in libcuda/libnccl (one
# rank) and a stand-in nccl-tests whose every operation takes NT_US: the
# rounds run interleaved, the control beside nccl-tests, and the summary
# says which rows agree.  The stand-in NCCL keeps each collective's stream
# busy for SPARKCTL_FAKE_NCCL_BUSY_US, so that sparkctl reads that time,
# and the ratio of the two is known.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"
unset SPARKCTL_FAKE_NCCL_HANG_BYTES SPARKCTL_FAKE_NCCL_HANG_AFTER SPARKCTL_FAKE_NCCL_CORRUPT \
  SPARKCTL_FAKE_NCCL_ASYNC_ERROR SPARKCTL_FAKE_NCCL_NET SPARKCTL_FAKE_CUDA_FREE_MIB \
  SPARKCTL_FAKE_CUDA_NO_PTX NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS \
  RANK WORLD_SIZE MASTER_ADDR MASTER_PORT LOCAL_RANK SPARKCTL_ROOT \
  GPUS OPS TRANSPORTS MODES OUT MPIRUN CONTROL SIZES NCCL_TESTS
export TMPDIR=$TMP

# The stand-in nccl-tests: -b, -e and -f as nccl-tests reads them, its
# header and rows.  The run's name (BENCH_NCCL_RUN) tells nccl-tests
# from the control and gives the round: nccl-tests' operations take NT_US
# times 0.95, 1 and 1.05 in rounds 1, 2, 3, so that its rounds spread 5%
# about NT_US; the control's are 10% longer, so that it reads 0.909 of
# nccl-tests, and a row agrees within 9.1%: a wide margin for a loaded
# machine that delays sparkctl's issue of the operations.
nt=$TMP/nccl-tests
mkdir "$nt"
cat > "$nt/all_reduce_perf" << 'PY'
#!/usr/bin/env python3
import os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
def size(s):
    return int(s[:-1]) * unit[s[-1]] if s[-1] in unit else int(s)
lo, hi, f = size(args["-b"]), size(args["-e"]), int(args["-f"])
# TRANSPORT.OP.WHO.ROUND, where WHO may hold a dot (a mode "--precision=1.5%").
transport, op, rest = os.environ["BENCH_NCCL_RUN"].split(".", 2)
who, rnd = rest.rsplit(".", 1)
t = float(os.environ["NT_US"]) * (0.95, 1, 1.05)[(int(rnd) - 1) % 3]
t *= 1.1 if who == "control" else 1
name = os.path.basename(sys.argv[0])
redop = "none" if name.startswith("all_gather") else "sum"
print("# nccl-tests stand-in: %s" % name)
print("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong")
while lo <= hi:
    bw = lo / t / 1e3
    half = "%8.1f %7.2f %7.2f %6d" % (t, bw, 0.0, 0)
    print("%12d %12d %8s %6s %6d %s %s" % (lo, lo // 4, "float", redop, -1, half, half))
    lo *= f
print("# Out of bounds values : 0 OK")
PY
chmod +x "$nt/all_reduce_perf"
cp "$nt/all_reduce_perf" "$nt/all_gather_perf"
# mpirun: its options dropped, one process.
cat > "$TMP/mpirun" << 'SH'
#!/bin/sh
while [ "$1" != -np ]; do shift; done
shift 2
exec "$@"
SH
chmod +x "$TMP/mpirun"

# bench_script CASE ROUNDS: the script on the stand-ins, its summary in
# $TMP/CASE.md, its outputs in $TMP/CASE.
bench_script() {
  fake gb10 env NT_US="$NT_US" SPARKCTL_FAKE_NCCL_BUSY_US="$BUSY_US" SPARKCTL="$SPARKCTL" \
    GPUS=1 MPIRUN="$TMP/mpirun" SIZES="-b 512K -e 1M" OUT="$TMP/$1" \
    bash "$SRCDIR/bench/bench-nccl.sh" "$nt" "$2" > "$TMP/$1.md" 2> "$TMP/$1.err" ||
    { cat "$TMP/$1.err" >&2; fail "bench-nccl.sh ($1) failed"; }
}

# Both tools at 5 ms an operation: every row agrees, in both modes, both
# transports, both collectives; each run's output is kept.
NT_US=5000 BUSY_US=5000 bench_script same 3
for t in nvlink socket; do
  for op in all_reduce all_gather; do
    contains "$TMP/same.md" "### $op, $t, 3 rounds"
    for who in nccl-tests control fixed adaptive; do
      for r in 1 2 3; do
        [ -s "$TMP/same/$t.$op.$who.$r.wall" ] || fail "no wall time for $t.$op.$who.$r"
      done
    done
  done
done
# Every round runs each of the four once, in an order of its own.
python3 - "$TMP/same/order" << 'PY' || { cat "$TMP/same/order"; fail "the rounds' orders are not shuffled"; }
import sys
lines = [l.split(": ") for l in open(sys.argv[1]).read().splitlines()]
assert len(lines) == 4 * 3, lines
for _, order in lines:
    assert sorted(order.split()) == ["adaptive", "control", "fixed", "nccl-tests"], order
assert len({order for _, order in lines[:3]}) > 1, lines[:3]
PY
for who in "nccl-tests" "control" "sparkctl fixed" "sparkctl adaptive"; do
  [ "$(grep -c "^| $who | " "$TMP/same.md")" = 4 ] || fail "$who: not a wall time per table"
done
# The rows from 1 MiB: 1 MiB, both placements; below it, 512 KiB.
[ "$(grep -c "^- fixed: .*; 2/2 agree; below 1 MiB 2/2 within the spread" "$TMP/same.md")" = 4 ] ||
  { cat "$TMP/same.md"; fail "fixed mode does not agree"; }
[ "$(grep -c "^- adaptive: .*against fixed .*; 2/2 agree" "$TMP/same.md")" = 4 ] ||
  { cat "$TMP/same.md"; fail "adaptive mode does not agree"; }
[ "$(grep -c "^- control: busbw 0.909 (" "$TMP/same.md")" = 4 ] || fail "the control is not nccl-tests"
# Every data row: sparkctl's ratios near 1, #wrong 0.
python3 - "$TMP/same.md" << 'PY' || fail "the tables are not those expected"
import sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| ") and l.split("|")[1].strip().isdigit()]
assert len(rows) == 4 * 2, len(rows)
for l in rows:
    c = [x.strip() for x in l.split("|")[1:-1]]
    # size | nccl-tests time | busbw | then per column: time, busbw, ratio, #wrong
    for k in range(3, len(c), 4):
        assert 0.9 <= float(c[k + 2]) <= 1.0001, l
        assert c[k + 3] == "0", l
PY

# sparkctl a fifth slower: no row agrees, and the summary names them.  A
# mode VAR=VALUE is fixed mode with VAR set: here, as fast as nccl-tests'
# one round (0.95 of NT_US).
NT_US=5000 BUSY_US=6250 TRANSPORTS=nvlink OPS=all_reduce MODES="fixed SPARKCTL_FAKE_NCCL_BUSY_US=4750" \
  bench_script slow 1
contains "$TMP/slow.md" "- fixed: busbw "
contains "$TMP/slow.md" "; 0/2 agree (not: 1048576 B out-of-place 0."
contains "$TMP/slow.md" ", 1048576 B in-place 0."
grep -q "^- SPARKCTL_FAKE_NCCL_BUSY_US=4750: busbw .*against fixed 1\.[1-9].*; 2/2 agree" "$TMP/slow.md" ||
  { cat "$TMP/slow.md"; fail "the mode with a variable set is not fixed mode with it"; }
contains "$TMP/slow.md" "| sparkctl SPARKCTL_FAKE_NCCL_BUSY_US=4750 | "
lacks "$TMP/slow.md" "adaptive"

# Without the control, no row is judged against it; bad settings are one line.
NT_US=5000 BUSY_US=5000 TRANSPORTS=socket OPS=all_reduce MODES=fixed CONTROL=0 bench_script alone 1
lacks "$TMP/alone.md" "control"
lacks "$TMP/alone.md" "agree ("
contains "$TMP/alone.md" "- fixed: busbw "
expect 2 env CONTROL=2 bash "$SRCDIR/bench/bench-nccl.sh" "$nt"
contains "$TMP/err" "bench-nccl: CONTROL is 0 or 1"
expect 2 env SPARKCTL="$SPARKCTL" bash "$SRCDIR/bench/bench-nccl.sh" "$TMP/nowhere"
contains "$TMP/err" "bench-nccl: $TMP/nowhere/all_reduce_perf is not an executable"
expect 2 env SPARKCTL="$SPARKCTL" TRANSPORTS=ib bash "$SRCDIR/bench/bench-nccl.sh" "$nt" 1
contains "$TMP/err" "bench-nccl: unknown transport ib"
for rounds in 0 00 x -1; do
  expect 2 env SPARKCTL="$SPARKCTL" bash "$SRCDIR/bench/bench-nccl.sh" "$nt" "$rounds"
  contains "$TMP/err" "bench-nccl: ROUNDS is a whole number from 1, not '$rounds'"
done
for left in "$TMP"/bench-nccl.*; do
  [ ! -e "$left" ] || fail "a bad setting left $left behind"
done
