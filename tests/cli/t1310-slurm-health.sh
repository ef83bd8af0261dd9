#!/usr/bin/env bash
# sparkctl doctor --slurm-health against a real Slurm: slurmctld and one
# slurmd (node0) in namespaces of the test's own (tests/slurm/slurm.sh).
# A healthy node stays IDLE; a planted fabric fault (a twin port without
# carrier) drains it with sparkctl's reason, fabric.twins; the repair
# resumes it; a node drained by someone else is never
# resumed nor drained again over their reason; slurmd running it as its
# HealthCheckProgram drains and resumes; no slurmctld is exit 3.
. "$SRCDIR/tests/lib.sh"

# ---- without Slurm: the command line
expect 2 "$SPARKCTL" doctor --slurm-node node0
contains "$TMP/err" "--slurm-node goes with --slurm-health"
expect 2 "$SPARKCTL" doctor --slurm-health --json
expect 2 "$SPARKCTL" doctor --slurm-health -H node0
expect 2 "$SPARKCTL" doctor --slurm-health --slurm-node 'node0 state=down'
contains "$TMP/err" "is not a Slurm node name"
expect 2 "$SPARKCTL" storage check --slurm-health
# No scontrol to ask: exit 3, one line that says so.
PATH=/nonexistent expect 3 "$SPARKCTL" doctor --slurm-health --slurm-node node0 \
  --root "$FIXTURES/spark-2cable"
contains "$TMP/err" "scontrol: No such file or directory"
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "more than one line of error"
# A slurmctld that never answers: the run ends within its own deadline (Slurm
# kills a HealthCheckProgram at 60 s), exit 3, one line.  A stand-in scontrol
# hangs in 'show' (the node left as it is), or answers 'show' and hangs in
# the drain of a node whose fabric fails (the drain's outcome unknown).
mkdir -p "$TMP/hang-show" "$TMP/hang-update"
printf '#!/bin/sh\nexec sleep 300\n' > "$TMP/hang-show/scontrol"
cat > "$TMP/hang-update/scontrol" << 'EOF2'
#!/bin/sh
[ "$1" = update ] && exec sleep 300
echo "NodeName=node0 Arch=aarch64 CoresPerSocket=20 State=IDLE ThreadsPerCore=1"
EOF2
chmod +x "$TMP/hang-show/scontrol" "$TMP/hang-update/scontrol"
cp -a "$FIXTURES/spark-2cable" "$TMP/twin-down"
echo 0 > "$TMP/twin-down/sys/class/net/enP2p1s0f1np1/carrier"
# Both at once: each waits out the deadline.
for what in show update; do
  PATH=$TMP/hang-$what:$PATH "$SPARKCTL" doctor --slurm-health --slurm-node node0 \
    --root "$TMP/twin-down" > "$TMP/hang-$what.out" 2> "$TMP/hang-$what.err" &
  eval "hang_$what=\$!"
done
status=0
wait "$hang_show" || status=$?
[ "$status" = 3 ] || { cat "$TMP/hang-show.err" >&2; fail "a hanging scontrol show: exit $status, not 3"; }
contains "$TMP/hang-show.err" "sparkctl doctor: scontrol show node gave no answer within the health run's 20 s (Slurm ends a HealthCheckProgram at 60 s): node0 was left as it is"
[ "$(wc -l < "$TMP/hang-show.err")" = 1 ] || fail "more than one line of error"
status=0
wait "$hang_update" || status=$?
[ "$status" = 3 ] || { cat "$TMP/hang-update.err" >&2; fail "a hanging scontrol update: exit $status, not 3"; }
contains "$TMP/hang-update.err" "sparkctl doctor: scontrol update state=drain gave no answer within the health run's 20 s (Slurm ends a HealthCheckProgram at 60 s): node0 may or may not have been changed"
[ "$(wc -l < "$TMP/hang-update.err")" = 1 ] || fail "more than one line of error"
[ ! -s "$TMP/hang-show.out" ] && [ ! -s "$TMP/hang-update.out" ] || fail "printed a line without scontrol's answer"

require_root
for tool in slurmctld slurmd scontrol munged mungekey unshare nsenter; do
  command -v $tool > /dev/null || fail "no $tool (scripts/setup installs Slurm)"
done
. "$SRCDIR/tests/slurm/slurm.sh"

slurm_ns ctl 198.18.0.1
slurm_munge_start
# slurmd runs the health program itself too, once $SLURM_DIR/health.on exists
# (the end of the test): its environment is slurmd's, SLURMD_NODENAME included.
cat > "$SLURM_DIR/health.sh" << EOF2
#!/bin/sh
[ -e "$SLURM_DIR/health.on" ] || exit 0
SPARKCTL_ROOT="$TMP/node0" SLURM_CONF="$SLURM_DIR/slurm.conf" "$SPARKCTL" doctor --slurm-health \
  >> "$SLURM_DIR/health.out" 2>&1
EOF2
chmod +x "$SLURM_DIR/health.sh"
slurm_conf "SlurmctldHost=ctl(198.18.0.1)
NodeName=node0 NodeAddr=198.18.0.1 CPUs=1 RealMemory=1 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES State=UP
HealthCheckProgram=$SLURM_DIR/health.sh
HealthCheckInterval=1
HealthCheckNodeState=ANY"
slurm_ctld_start
slurmd_start node0

# show: the node's one line (scontrol show node node0 -o) in $TMP/node.
show() { slurm_in scontrol show node node0 -o > "$TMP/node"; }
# wait_state RE: until State= matches RE (at most 60 s).
wait_state() {
  local _
  for _ in $(seq 300); do
    show
    grep -qE " State=$1 " "$TMP/node" && return 0
    sleep 0.2
  done
  cat "$TMP/node" "$SLURM_DIR"/slurmd.node0.log >&2
  fail "node0 never reached State=$1"
}
wait_state IDLE

# The node's tree: spark-2cable, which passes every check, or with a fault planted.
cp -a "$FIXTURES/spark-2cable" "$TMP/node0"
# The fabric fault: the cabled port rocep1s0f1 is ACTIVE, its twin (the
# other PCIe half, enP2p1s0f1np1) has lost its carrier: half the bandwidth.
twin_carrier() { echo "$1" > "$TMP/node0/sys/class/net/enP2p1s0f1np1/carrier"; }
FABRIC_REASON="sparkctl: fabric.twins rocep1s0f1 is ACTIVE but its twin roceP2p1s0f1 (the other PCIe half of port p1) is without car..."
health() { expect "$1" slurm_in env SPARKCTL_ROOT="$TMP/node0" SLURMD_NODENAME=node0 \
  "$SPARKCTL" doctor --slurm-health; }

# ---- healthy: exit 0, the node stays IDLE, one line
health 0
[ "$(wc -l < "$TMP/out")" = 1 ] || fail "not one line"
contains "$TMP/out" "node0: healthy: no check failed"
# As slurmd runs it: an environment of its own (no PATH: scontrol from the default one).
expect 0 slurm_in env -i SLURM_CONF="$SLURM_DIR/slurm.conf" SPARKCTL_ROOT="$TMP/node0" \
  SLURMD_NODENAME=node0 "$SPARKCTL" doctor --slurm-health
contains "$TMP/out" "node0: healthy: no check failed"
show
contains "$TMP/node" " State=IDLE "
lacks "$TMP/node" "Reason="

# ---- a planted fabric fault drains the node, the reason naming the check
twin_carrier 0
health 4
contains "$TMP/out" "node0: drained: $FABRIC_REASON"
show
drained() {
  grep -qE " State=[A-Z_+]*\+DRAIN[A-Z_+]* " "$TMP/node" || { cat "$TMP/node" >&2; fail "node0 not drained"; }
}
drained
contains "$TMP/node" "Reason=$FABRIC_REASON ["
# Still failing: it stays drained, for the same reason.
health 4
contains "$TMP/out" "node0: stays drained: sparkctl: fabric.twins"
# The name from --slurm-node, over SLURMD_NODENAME.
expect 4 slurm_in env SPARKCTL_ROOT="$TMP/node0" SLURMD_NODENAME=nodeX \
  "$SPARKCTL" doctor --slurm-health --slurm-node node0
contains "$TMP/out" "node0: stays drained"

# ---- repaired (the carrier back): resumed
twin_carrier 1
health 0
contains "$TMP/out" "node0: resumed: every check passes (drained for: $FABRIC_REASON)"
show
lacks "$TMP/node" "DRAIN"
lacks "$TMP/node" "Reason="
wait_state IDLE
# A fault of the configuration (an NCCL_IB_HCA that names no device here) too.
echo "NCCL_IB_HCA=mlx5_0" > "$TMP/node0/etc/nccl.conf"
health 4
contains "$TMP/out" "node0: drained: sparkctl: nccl.ib_hca NCCL_IB_HCA (from /etc/nccl.conf) names mlx5_0"
rm "$TMP/node0/etc/nccl.conf"
health 0
contains "$TMP/out" "node0: resumed: every check passes (drained for: sparkctl: nccl.ib_hca"
wait_state IDLE

# ---- drained by someone else: never resumed, their reason kept, failing or not
slurm_in scontrol update nodename=node0 state=drain reason=maintenance
health 0
contains "$TMP/out" "node0: healthy; drained by someone else (maintenance): left as it is"
show
drained
contains "$TMP/node" "Reason=maintenance ["
twin_carrier 0
health 4
contains "$TMP/out" "node0: sparkctl: fabric.twins rocep1s0f1 is ACTIVE"
contains "$TMP/out" "drained by someone else (maintenance): left as it is"
show
drained
contains "$TMP/node" "Reason=maintenance ["
twin_carrier 1
# Their reason is anyone's text: shown escaped, kept as it is.
slurm_in scontrol update nodename=node0 reason=$'disk\e[31m swap'
health 0
contains "$TMP/out" 'drained by someone else (disk\x1b[31m swap): left as it is'
show
contains "$TMP/node" $'Reason=disk\e[31m swap ['
slurm_in scontrol update nodename=node0 state=resume
wait_state IDLE

# ---- slurmd runs it: the fault drains the node, the repair resumes it
# wait_line TEXT: until the node's line has TEXT (at most 60 s).
wait_line() {
  local _
  for _ in $(seq 300); do
    show
    grep -qF -- "$1" "$TMP/node" && return 0
    sleep 0.2
  done
  cat "$TMP/node" "$SLURM_DIR/health.out" >&2
  fail "node0's line never had '$1'"
}
twin_carrier 0
touch "$SLURM_DIR/health.on"
wait_line "Reason=$FABRIC_REASON ["
drained
contains "$SLURM_DIR/health.out" "node0: drained: sparkctl: fabric.twins"
twin_carrier 1
wait_state IDLE
lacks "$TMP/node" "Reason="
contains "$SLURM_DIR/health.out" "node0: resumed: every check passes"
rm "$SLURM_DIR/health.on"

# ---- a node Slurm does not know, then no slurmctld: exit 3, one line
expect 3 slurm_in env SPARKCTL_ROOT="$TMP/node0" "$SPARKCTL" doctor --slurm-health \
  --slurm-node node9
contains "$TMP/err" "doctor: scontrol show: Node node9 not found"
slurm_ctld_stop
health 3
contains "$TMP/err" "doctor: scontrol show: slurm_load_node error: Unable to contact slurm controller"
[ "$(wc -l < "$TMP/err")" = 1 ] || fail "more than one line of error"
[ ! -s "$TMP/out" ] || fail "printed a line without scontrol's answer"
