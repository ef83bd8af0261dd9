#!/usr/bin/env bash
# bench-cluster.sh - 'sparkctl doctor -H' over 8 namespace nodes with real sshd
# (target: under 2 s), and over 2.  Needs root; prints figures, never fails on them.
#   SPARKCTL=build/sparkctl SRCDIR=. bench/bench-cluster.sh
set -u
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require

ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
measure() { # measure LABEL ARGS...: median of 5 runs
  local label=$1 t0 t1 times=""
  shift
  for _ in 1 2 3 4 5; do
    # doctor exits 1 on the fixture's failed checks: a result, not a failed run.
    t0=$(ms); "$SPARKCTL" doctor "$@" > /dev/null 2>&1 || true; t1=$(ms)
    times="$times $((t1 - t0))"
  done
  printf '%-40s median %5d ms   (runs:%s)\n' "$label" \
    "$(echo "$times" | tr ' ' '\n' | sed '/^$/d' | sort -n | sed -n 3p)" "$times"
}

for n in 2 8; do
  cluster_up "$n" > /dev/null
  measure "doctor -H over $n nodes ($CLUSTER_FABRIC)" -H "$(cluster_hosts)"
  cluster_down
done
echo "target: cluster doctor on 8 nodes under 2 s"
