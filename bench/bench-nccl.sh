#!/bin/bash
# bench/bench-nccl.sh - sparkctl bench nccl against nccl-tests on this
# machine's GPUs: the wall time of whole sweeps and the busbw of each size,
# both tools on the same GPUs in the same run, interleaved, several rounds.
#
#   bench/bench-nccl.sh NCCL_TESTS_BUILD [ROUNDS]
#   NCCL_TESTS=NCCL_TESTS_BUILD ninja -C build bench-nccl
#
# NCCL_TESTS_BUILD is nccl-tests' build directory (all_reduce_perf ...),
# built with MPI=1 (git clone https://github.com/NVIDIA/nccl-tests;
# make -C nccl-tests MPI=1 MPI_HOME=...).  ROUNDS: 5 (at 1 MiB
# and below, and on the socket transport, a median of three rounds moves
# by several percent).
# Environment:
#   SPARKCTL    the program (build/sparkctl)
#   GPUS        ranks, one GPU each (2)
#   OPS         collectives ("all_reduce all_gather")
#   TRANSPORTS  "nvlink socket": NCCL's choice (NVLink within a node) and its
#               network transport (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1,
#               which stands in for two Sparks); socket sweeps 1M-256M
#   MODES       sparkctl's modes: "fixed" (nccl-tests' 20 iterations) and
#               "adaptive" (--precision 2%); a word VAR=VALUE is fixed mode
#               with VAR set ("fixed NCCL_DEBUG=WARN" sets one against the
#               other); any other word, sparkctl's options ("--bind=none")
#   OUT         where each run's output, the rounds' orders (order) and the
#               summary go (a new folder under TMPDIR)
#   MPIRUN      mpirun (Open MPI) and its options
#   CONTROL     1 (default): run nccl-tests a second time in each round, as
#               "control", so that each table shows how far nccl-tests'
#               own median moves from one set of rounds to another; 0: not
#   SIZES       the sizes of every transport's sweep instead of its own,
#               as -b and -e ("-b 1M -e 64M")
#
# Each run sees its name (TRANSPORT.OP.WHO.ROUND) in BENCH_NCCL_RUN, for
# a wrapper in MPIRUN that records or profiles it.
# Each run's wall time is from its start to its exit, as a user waits for
# it: nccl-tests under mpirun (-np GPUS -g 1, bound to cores), sparkctl
# bench nccl --gpus GPUS (its defaults: the check on).  Prints, per
# transport and collective, the wall times (median, min-max) and, per
# size, the median busbw of each and the ratio to nccl-tests' median.
# A row agrees where sparkctl's busbw is within 2% of nccl-tests' median,
# or no further from it than the control's (nccl-tests against itself:
# below 1 MiB, and on the socket transport, its rounds spread by more).
set -eu

nt=${1:-${NCCL_TESTS:?usage: bench/bench-nccl.sh NCCL_TESTS_BUILD [ROUNDS] (or NCCL_TESTS=DIR)}}
rounds=${2:-5}
sparkctl=${SPARKCTL:-build/sparkctl}
gpus=${GPUS:-2}
ops=${OPS:-all_reduce all_gather}
transports=${TRANSPORTS:-nvlink socket}
modes=${MODES:-fixed adaptive}
mpirun=${MPIRUN:-mpirun --allow-run-as-root --bind-to core --map-by core}
control=${CONTROL:-1}
sizes=${SIZES:-}
case $control in 0 | 1) ;; *) echo "bench-nccl: CONTROL is 0 or 1" >&2; exit 2 ;; esac
[[ $rounds =~ ^[0-9]+$ ]] && ((10#$rounds >= 1)) ||
  { echo "bench-nccl: ROUNDS is a whole number from 1, not '$rounds'" >&2; exit 2; }

# sweep_of TRANSPORT: its environment (env) and sizes (range); 1 if unknown.
sweep_of() {
  case $1 in
  nvlink) env=(); range=(-b 8 -e 1G) ;;
  socket) env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1); range=(-b 1M -e 256M) ;;
  *) return 1 ;;
  esac
  # shellcheck disable=SC2206 # SIZES is words: -b MIN -e MAX
  [ -z "$sizes" ] || range=($sizes)
}
for transport in $transports; do
  sweep_of "$transport" || { echo "bench-nccl: unknown transport $transport" >&2; exit 2; }
done
for tool in "$sparkctl" "$nt/all_reduce_perf"; do
  [ -x "$tool" ] || { echo "bench-nccl: $tool is not an executable" >&2; exit 2; }
done
# Only once the settings are good: a bad one leaves nothing behind.
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench-nccl.XXXXXX")}
mkdir -p "$out"

now() { date +%s.%N; }

# run NAME CMD...: time CMD, its output in $out/NAME.out, the wall time in $out/NAME.wall.
run() {
  local name=$1 start end
  shift
  start=$(now)
  if ! "$@" >"$out/$name.out" 2>"$out/$name.err"; then
    echo "bench-nccl: $name failed:" >&2
    tail -5 "$out/$name.err" >&2
    exit 1
  fi
  end=$(now)
  echo "$start $end" | awk '{ printf "%.3f\n", $2 - $1 }' >"$out/$name.wall"
}

for transport in $transports; do
  sweep_of "$transport"
  for op in $ops; do
    for round in $(seq 1 "$rounds"); do
      # Each round runs its own order, shuffled with the round as seed, so
      # that no run always comes first, or always after the same other run
      # (a run that always followed nccl-tests read several percent apart
      # from one that always followed sparkctl).  $out/order keeps them.
      tests="nccl-tests"
      [ "$control" = 1 ] && tests="nccl-tests control"
      # shellcheck disable=SC2086 # the words are the runs
      order=$(python3 -c 'import random, sys
runs = sys.argv[2:]
random.Random(int(sys.argv[1])).shuffle(runs)
print(" ".join(runs))' "$round" $tests $modes)
      echo "$transport $op $round: $order" >>"$out/order"
      for who in $order; do
        name=$transport.$op.$who.$round
        export BENCH_NCCL_RUN=$name
        case $who in
        nccl-tests | control)
          run "$name" env "${env[@]}" $mpirun -np "$gpus" \
            "$nt/${op}_perf" -g 1 "${range[@]}" -f 2 -c 1 ;;
        fixed)
          run "$name" env "${env[@]}" "$sparkctl" bench nccl --gpus "$gpus" --op "$op" \
            "${range[@]}" -f 2 -o "$out/$name.json" ;;
        adaptive)
          run "$name" env "${env[@]}" "$sparkctl" bench nccl --gpus "$gpus" --op "$op" \
            "${range[@]}" -f 2 --precision 2% -o "$out/$name.json" ;;
        *=*)
          run "$name" env "${env[@]}" "$who" "$sparkctl" bench nccl --gpus "$gpus" --op "$op" \
            "${range[@]}" -f 2 -o "$out/$name.json" ;;
        *)
          run "$name" env "${env[@]}" "$sparkctl" bench nccl --gpus "$gpus" --op "$op" \
            "${range[@]}" -f 2 $who -o "$out/$name.json" ;;
        esac
        echo "bench-nccl: $name $(cat "$out/$name.wall") s" >&2
      done
    done
  done
done

python3 - "$out" "$rounds" "$transports" "$ops" "$modes" "$control" <<'EOF' | tee "$out/summary.md"
import json, statistics, sys
out, rounds, transports, ops, modes = sys.argv[1], int(sys.argv[2]), *[a.split() for a in sys.argv[3:6]]
control = sys.argv[6] == "1"

def count(field):
    return int(field) if field.isdigit() else 0

def nccl_tests_rows(path):
    rows = {}
    for line in open(path):
        f = line.split()
        if line.startswith("#") or len(f) < 13 or not f[0].isdigit():
            continue
        # size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
        rows[int(f[0])] = (float(f[5]), float(f[7]), float(f[9]), float(f[11]),
                           count(f[8]), count(f[12]))
    return rows

def sparkctl_rows(path):
    rows = {}
    for t in json.load(open(path))["tests"]:
        for r in t["results"]:
            o, i = r["out_of_place"], r["in_place"]
            rows[r["size_bytes"]] = (o["time_us"], o["busbw_gbytes_per_second"],
                                     i["time_us"], i["busbw_gbytes_per_second"],
                                     o["wrong"] or 0, i["wrong"] or 0)
    return rows

def med(xs):
    return statistics.median(xs) if xs else float("nan")

def times(runs, size, ti):
    return [r[size][ti] for r in runs if size in r]

def busbw_ratio(runs, base, size, ti):
    """busbw over base's, as the medians of the time (busbw is size over
    time times a constant, and the time is not rounded as nccl-tests'
    busbw is)."""
    t = med(times(runs, size, ti))
    return med(times(base, size, ti)) / t if t > 0 else float("nan")

def span(pairs):
    """'lo (size) - hi (size)' of (ratio, size) pairs."""
    if not pairs:
        return "none"
    (lo, s_lo), (hi, s_hi) = min(pairs), max(pairs)
    return f"{lo:.3f} ({s_lo} B) - {hi:.3f} ({s_hi} B)"

def verdicts(nt, runs):
    """The issue's measures, both placements.  From 1 MiB: busbw over
    nccl-tests' median; adaptive over fixed; the rows that agree (within
    2%, or no further than the control, nccl-tests against itself).  Below
    1 MiB: the rows whose median lies within nccl-tests' spread (no
    further from its median than its farthest round) and within the range
    of its rounds."""
    rule = "; a row agrees within 2% or within the control's distance" if control else ""
    print(f"\nBoth placements: busbw from 1 MiB over nccl-tests' median{rule}; below "
          "1 MiB, rows within nccl-tests' spread about its median / within the range of "
          "its rounds.\n")
    for who, rows in runs.items():
        big, vs_fixed, small, spread, inside, rows_big, agree, off = [], [], 0, 0, 0, 0, 0, []
        for size in sorted(nt[0]):
            for ti in (0, 2):
                ts = times(nt, size, ti)
                t0, t = med(ts), med(times(rows, size, ti))
                if size < 1 << 20:
                    small += 1
                    spread += abs(t - t0) <= max(abs(x - t0) for x in ts)
                    inside += min(ts) <= t <= max(ts)
                    continue
                ratio = busbw_ratio(rows, nt, size, ti)
                big.append((ratio, size))
                if who not in ("fixed", "control") and "fixed" in runs:
                    vs_fixed.append((busbw_ratio(rows, runs["fixed"], size, ti), size))
                if who != "control" and "control" in runs:
                    rows_big += 1
                    limit = max(0.02, abs(busbw_ratio(runs["control"], nt, size, ti) - 1))
                    if abs(ratio - 1) <= limit:
                        agree += 1
                    else:
                        off.append(f"{size} B {'in' if ti else 'out-of'}-place {ratio:.3f}")
        line = f"- {who}: busbw {span(big)}"
        if vs_fixed:
            line += f"; against fixed {span(vs_fixed)}"
        if rows_big:
            line += f"; {agree}/{rows_big} agree" + (f" (not: {', '.join(off)})" if off else "")
        if small:
            line += f"; below 1 MiB {spread}/{small} within the spread, {inside}/{small} within the range"
        print(line)

for transport in transports:
    for op in ops:
        print(f"\n### {op}, {transport}, {rounds} rounds\n")
        print("| run | wall time median (s) | min-max (s) | vs nccl-tests |")
        print("|---|---|---|---|")
        # The control is nccl-tests run again: its rows read as nccl-tests'.
        who_all = ["nccl-tests"] + (["control"] if control else []) + modes
        walls = {}
        for who in who_all:
            walls[who] = [float(open(f"{out}/{transport}.{op}.{who}.{r}.wall").read())
                          for r in range(1, rounds + 1)]
        base = med(walls["nccl-tests"])
        for who, w in walls.items():
            label = who if who in ("nccl-tests", "control") else f"sparkctl {who}"
            print(f"| {label} | {med(w):.2f} | {min(w):.2f}-{max(w):.2f} | {med(w) / base:.2f} |")
        def rows_of(who, r):
            path = f"{out}/{transport}.{op}.{who}.{r}"
            if who == "control":
                return nccl_tests_rows(path + ".out")
            return sparkctl_rows(path + ".json")
        nt = [nccl_tests_rows(f"{out}/{transport}.{op}.nccl-tests.{r}.out")
              for r in range(1, rounds + 1)]
        runs = {who: [rows_of(who, r) for r in range(1, rounds + 1)] for who in who_all[1:]}
        head = "| size (B) | nccl-tests time (us), median (min-max) | nccl-tests busbw (GB/s) |"
        rule = "|---|---|---|"
        for who in runs:
            head += f" {who} time (us) | {who} busbw (GB/s) | {who} busbw ratio | {who} #wrong |"
            rule += "---|---|---|---|"
        print("\nOut-of-place; ratios are the median's over nccl-tests' median (from the "
              "times); a time in brackets is outside the range of nccl-tests' own rounds.\n")
        print(head)
        print(rule)
        for size in sorted(nt[0]):
            ts = times(nt, size, 0)
            b0 = med([r[size][1] for r in nt if size in r])
            line = f"| {size} | {med(ts):.1f} ({min(ts):.1f}-{max(ts):.1f}) | {b0:.2f} |"
            for who, rows in runs.items():
                rs = [r[size] for r in rows if size in r]
                t = med([r[0] for r in rs])
                b = med([r[1] for r in rs])
                wrong = sum(r[4] + r[5] for r in rs)
                shown = f"{t:.1f}" if min(ts) <= t <= max(ts) else f"[{t:.1f}]"
                line += f" {shown} | {b:.2f} | {busbw_ratio(rows, nt, size, 0):.3f} | {wrong} |"
            print(line)
        verdicts(nt, runs)
EOF
echo "bench-nccl: outputs in $out" >&2
