#!/usr/bin/env bash
# bench-launch.sh - 'sparkctl launch' against pdsh and Open MPI's mpirun: the
# wall time of running 'true' on 8 namespace nodes with real sshd, 1 and 8
# ranks per node (median of 5 runs; target: sparkctl faster than both).
# Needs root; prints figures, never fails on them.  pdsh and mpirun are the
# Debian packages pdsh and openmpi-bin; a tool that is missing is skipped.
#   SPARKCTL=build/sparkctl SRCDIR=. bench/bench-launch.sh
#
# All three reach the nodes through the cluster's ssh wrapper, $SPARKCTL_SSH:
#   sparkctl  launch -q --no-env -H node0,...,node7 [-N 8] -- true, twice:
#             "sparkctl" reuses the ssh connection the previous launch kept
#             (ControlPersist, the default), "sparkctl_cold" makes new ones and
#             closes them (--ssh-close), as pdsh and mpirun do on every run
#   pdsh      -R exec -w node[0-7] $SPARKCTL_SSH %h CMD  (no ranks: with 8 per
#             node, CMD starts 8 'true' in the background and waits for them)
#   mpirun    --host node0:R,... -np 8R with plm_rsh_agent $SPARKCTL_SSH; it
#             runs in the hub's namespace (cluster_client), where the orted
#             daemons it starts on the nodes can connect back to it.
# sparkctl and pdsh run here, as a user would run them.
# SPARKCTL_BASE=OTHER_BINARY adds "base" and "base_cold": another build of
# sparkctl (the one before a change), run in turn with the others.
# SPARKCTL_BENCH_RUNS sets the runs per case (default 5).
set -u
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require

NODES=8
RUNS=${SPARKCTL_BENCH_RUNS:-5}
LIMIT=120 # seconds a run may take before it is stopped (and counted as failed)

now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# TOOL_argv RANKS_PER_NODE CMD: argv, the command line that runs CMD as the job.
sparkctl_argv() {
  argv=("$SPARKCTL" launch -q --no-env -H "$(cluster_hosts)")
  [ "$1" = 1 ] || argv+=(--nproc-per-node "$1")
  argv+=(-- "$2")
}
sparkctl_cold_argv() {
  sparkctl_argv "$@"
  argv=("${argv[0]}" launch --ssh-close "${argv[@]:2}")
}
base_argv() {
  sparkctl_argv "$@"
  argv[0]=$SPARKCTL_BASE
}
base_cold_argv() {
  sparkctl_cold_argv "$@"
  argv[0]=$SPARKCTL_BASE
}
pdsh_argv() {
  local cmd=$2
  [ "$1" = 1 ] || cmd="for i in $(seq -s ' ' "$1"); do $cmd & done; wait"
  argv=(pdsh -R exec -w "node[0-$((CLUSTER_N - 1))]" "$SPARKCTL_SSH" %h "$cmd")
}
mpirun_argv() {
  local hosts="" i
  for ((i = 0; i < CLUSTER_N; i++)); do hosts+="${hosts:+,}node$i:$1"; done
  # In the hub's namespace (as cluster_client runs it).  The nodes cannot ssh
  # to each other (no tree spawn); the daemons talk over the LAN only;
  # session directories go to $TMP.
  # shellcheck disable=SC2054 # "self,tcp" is one argument
  argv=(nsenter --net="/run/netns/$CLUSTER_HUB" --
    mpirun --allow-run-as-root --host "$hosts" -np $((CLUSTER_N * $1))
    --mca plm_rsh_agent "$SPARKCTL_SSH" --mca plm_rsh_no_tree_spawn 1
    --mca oob_tcp_if_include "$CLUSTER_LAN_NET.0/24"
    --mca btl self,tcp --mca btl_tcp_if_include "$CLUSTER_LAN_NET.0/24"
    --mca orte_tmpdir_base "$TMP" "$2")
}

# verify TOOL RANKS: run 'hostname' (up to 3 tries); every node must answer
# RANKS times.  Prints what it found; false if the tool never got it right.
verify() {
  local tool=$1 r=$2 rc i got line ok try argv
  "${tool}_argv" "$r" hostname
  for try in 1 2 3; do
    rc=0
    timeout -k 5 "$LIMIT" "${argv[@]}" > "$TMP/verify.out" 2> "$TMP/verify.err" || rc=$?
    ok=0
    line=""
    for ((i = 0; i < CLUSTER_N; i++)); do
      # sparkctl prefixes a rank's lines with [RANK], pdsh with "nodeI: ".
      got=$(grep -c -E "(^|[] :])node$i\$" "$TMP/verify.out" || true)
      if [ "$got" = "$r" ]; then ok=$((ok + 1)); fi
      line+=" node$i:$got"
    done
    if [ "$rc" = 0 ] && [ "$ok" = "$CLUSTER_N" ]; then
      printf '  %-13s x%d reaches %d/%d nodes, %d hostname(s) each\n' "$tool" "$r" "$ok" \
        "$CLUSTER_N" "$r"
      return 0
    fi
    printf '  %-13s x%d try %d FAILED: exit %d, hostnames per node:%s\n' "$tool" "$r" "$try" \
      "$rc" "$line"
    sed 's/^/    | /' "$TMP/verify.err" | head -n 10
  done
  return 1
}

# leftovers: the processes in the cluster's namespaces other than sshd and
# kept ssh connections (a launcher should leave none behind once it has returned).
leftovers() {
  local ns pids
  sleep 0.2
  pids=$(for ns in "$CLUSTER_HUB" "${_cluster_ns[@]}"; do ip netns pids "$ns"; done | tr '\n' ' ')
  [ -n "${pids// /}" ] || return 0
  # shellcheck disable=SC2086
  # The ssh connections sparkctl keeps for the next launch (a "[mux]" master
  # here, its "sshd: root" session process on the node) are not the job's.
  ps -o pid=,args= -p ${pids// /,} 2> /dev/null \
    | grep -v -e 'sshd -D -f' -e '\[listener\]' -e '\[mux\]' -e 'sshd: root' || true
}

# run_one TOOL RANKS RUN: one timed run of 'true'.  Its time goes to
# all_ms[TOOL.RANKS], and to ok_ms[TOOL.RANKS] if it succeeded; runs[TOOL.RANKS]
# shows it (a failed run with its exit status).
declare -A all_ms ok_ms runs failed median
run_one() {
  local tool=$1 r=$2 k=$3 t0 t1 rc=0 left argv
  "${tool}_argv" "$r" true
  t0=$(now_ms)
  timeout -k 5 "$LIMIT" "${argv[@]}" > "$TMP/run.out" 2> "$TMP/run.err" || rc=$?
  t1=$(now_ms)
  all_ms[$tool.$r]+=" $((t1 - t0))"
  if [ "$rc" = 0 ]; then
    ok_ms[$tool.$r]+=" $((t1 - t0))"
    runs[$tool.$r]+=" $((t1 - t0))"
  else
    runs[$tool.$r]+=" $((t1 - t0))(exit $rc)"
    failed[$tool.$r]=$((${failed[$tool.$r]:-0} + 1))
    printf '  %-13s x%d run %d exited %d%s\n' "$tool" "$r" "$k" "$rc" \
      "$([ -s "$TMP/run.out" ] || [ -s "$TMP/run.err" ] || echo ', printing nothing')"
    cat "$TMP/run.out" "$TMP/run.err" | sed 's/^/    | /' | head -n 5
  fi
  left=$(leftovers)
  if [ -n "$left" ]; then
    printf '  %-13s x%d run %d left processes in the cluster:\n' "$tool" "$r" "$k"
    printf '%s\n' "$left" | sed 's/^/    | /'
  fi
}

read -r load _ < /proc/loadavg
cluster_up "$NODES" > /dev/null
echo "launch 'true' on $CLUSTER_N namespace nodes (real sshd, $CLUSTER_FABRIC fabric)," \
  "$(nproc) CPUs, load average $load"
tools=()
for tool in sparkctl sparkctl_cold base base_cold pdsh mpirun; do
  if [ "${tool%_cold}" = base ]; then
    [ -n "${SPARKCTL_BASE:-}" ] || continue
  elif [ "${tool%_cold}" != sparkctl ] && ! command -v "$tool" > /dev/null 2>&1; then
    printf '  %-13s skipped: install pdsh openmpi-bin (no %s command)\n' "$tool" "$tool"
    continue
  fi
  ok=1
  verify "$tool" 1 || ok=0
  verify "$tool" 8 || ok=0
  if [ "$ok" = 1 ]; then
    tools+=("$tool")
  elif [ "${tool%_cold}" = sparkctl ]; then
    tools+=("$tool")
    printf '  %-13s measured anyway; failed runs are marked\n' "$tool"
  else
    printf '  %-13s skipped: it does not reach every node here (see above)\n' "$tool"
  fi
done
echo "  (pdsh has no ranks: x8 is one shell per node running 8 'true' in the background)"
echo "  median of $RUNS runs; the tools take turns, in a rotating order"
nt=${#tools[@]}
for r in 1 8; do
  for ((k = 1; k <= RUNS; k++)); do
    for ((j = 0; j < nt; j++)); do run_one "${tools[$(((j + k) % nt))]}" "$r" "$k"; done
  done
  for tool in "${tools[@]}"; do
    # The median of the runs that succeeded (a failed run may have been cut
    # short); of all runs if none did.
    list=${ok_ms[$tool.$r]:-${all_ms[$tool.$r]}}
    median[$tool.$r]=$(tr ' ' '\n' <<< "$list" | sed '/^$/d' | sort -n \
      | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    printf '  %-13s x%d  %3d ranks  median %5d ms   (runs:%s)\n' "$tool" "$r" \
      $((CLUSTER_N * r)) "${median[$tool.$r]}" "${runs[$tool.$r]}"
  done
done
cluster_down
read -r load _ < /proc/loadavg

# ratio TOOL RANKS SPARKCTL: TOOL's median over SPARKCTL's (>1: sparkctl is faster).
ratio() {
  local a=${median[$1.$2]:-} b=${median[$3.$2]:-}
  if [ -z "$a" ] || [ -z "$b" ] || [ "$b" = 0 ]; then echo -; return; fi
  awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }'
}
echo
printf '%-13s %5s %6s %9s %7s %14s %16s\n' tool ranks /node 'median ms' failed \
  pdsh/sparkctl mpirun/sparkctl
for r in 1 8; do
  for tool in "${tools[@]}"; do
    if [ "${tool%_cold}" = sparkctl ]; then
      set -- "$(ratio pdsh "$r" "$tool")" "$(ratio mpirun "$r" "$tool")"
    else
      set -- "" ""
    fi
    printf '%-13s %5d %6d %9d %5d/%d %14s %16s\n' "$tool" $((NODES * r)) "$r" \
      "${median[$tool.$r]}" "${failed[$tool.$r]:-0}" "$RUNS" "$1" "$2"
  done
done
echo "(sparkctl: ssh connections kept from the run before; sparkctl_cold: new ones each run," \
  "like pdsh and mpirun)"
echo "(median of the runs that succeeded; failed: runs that exited non-zero;" \
  "load average $load at the end: other work on this machine slows every tool)"
echo "target: sparkctl launch faster than pdsh and mpirun"
