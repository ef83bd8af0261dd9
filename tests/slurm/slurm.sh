# tests/slurm/slurm.sh - a real Slurm for the tests, in namespaces of its own.
# Sourced after tests/lib.sh (it uses $TMP, at_exit, kill_child and fail).
#
#   slurm_ns NAME ADDR        new UTS, mount and network namespaces: loopback up,
#                             ADDR (198.18.0.0/15) on it, the host name NAME
#   slurm_in CMD...           run CMD in them (SLURM_CONF is the test's slurm.conf)
#   slurm_munge_start         munged with a key of the test's own, its own socket:
#                             then slurm.conf authenticates with munge (else auth/none)
#   slurm_conf LINES          $SLURM_DIR/slurm.conf: what every test needs, then LINES
#   slurm_ctld_start          slurmctld -D, waited for until scontrol answers
#   slurm_ctld_stop           stop it (and wait for it)
#   slurmd_start NODE         slurmd -D -N NODE, its own spool, pid and log files
#
# On the namespace nodes of tests/cluster/cluster.sh (cluster_up first):
#   slurm_cluster_up [LINES]  slurmctld in the hub's network namespace
#                             (198.18.0.1, host name ctl), one slurmd per
#                             node in the node's network namespace and a UTS
#                             namespace of its own (host name nodeI,
#                             'slurmd -N nodeI', NodeAddr its LAN address);
#                             one munged of the test's (auth/munge) for all;
#                             each node Gres=gpu:1, its File=/dev/null (no
#                             GPU here), select/cons_tres giving whole nodes;
#                             a TaskProlog gives each task its node's tree
#                             (SPARKCTL_ROOT=$TMP/nodes/nodeI); LINES are
#                             added to slurm.conf.  Waits until every node
#                             is idle.
#   slurm_client CMD...       run CMD where the cluster's clients run (the
#                             hub's network namespace, SLURM_CONF set)
#
# Every process started here is stopped when the test ends, however it ends.
SLURM_DIR=$TMP/slurm
mkdir -p "$SLURM_DIR/state"
_slurm_ns_pid=""
_slurm_ctld_pid=""
_slurmd_pids=""
_slurm_munged_pid=""
_slurm_auth="AuthType=auth/none
CredType=cred/none"

_slurm_stop_all() {
  local p
  for p in $_slurmd_pids $_slurm_ctld_pid $_slurm_munged_pid $_slurm_ns_pid; do
    kill_child "$p"
  done
}
at_exit _slurm_stop_all

slurm_ns() {
  # unshare execs sleep in the new namespaces: its pid names them for nsenter.
  unshare --uts --mount --net sleep infinity &
  _slurm_ns_pid=$!
  # Until unshare has moved into them (its net namespace is no longer ours).
  local _
  for _ in $(seq 100); do
    [ "$(readlink "/proc/$_slurm_ns_pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
    sleep 0.1
  done
  slurm_in ip link set lo up
  slurm_in ip addr add "$2/32" dev lo
  slurm_in hostname "$1"
}

slurm_in() {
  SLURM_CONF=$SLURM_DIR/slurm.conf nsenter -t "$_slurm_ns_pid" -u -m -n "$@"
}

slurm_munge_start() {
  local m=$SLURM_DIR/munge _
  mkdir -p "$m"
  chmod 700 "$m"
  mungekey -c -k "$m/munge.key" -b 1024
  # -f: the test's directories are not munged's own (it runs as root here).
  (exec nsenter -t "$_slurm_ns_pid" -u -m -n munged -F -f -S "$m/socket" \
    --key-file="$m/munge.key" --pid-file="$m/munged.pid" --seed-file="$m/seed" \
    --log-file="$m/munged.log" > "$m/munged.out" 2>&1) &
  _slurm_munged_pid=$!
  for _ in $(seq 300); do
    [ -S "$m/socket" ] && slurm_in munge -n -S "$m/socket" > /dev/null 2>&1 && break
    kill -0 "$_slurm_munged_pid" 2> /dev/null || { cat "$m/munged.out" >&2; fail "munged ended"; }
    sleep 0.1
  done
  _slurm_auth="AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$m/socket"
}

slurm_conf() {
  cat > "$SLURM_DIR/slurm.conf" << EOF2
ClusterName=sparkctl-test
$_slurm_auth
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$SLURM_DIR/state
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmctldLogFile=$SLURM_DIR/slurmctld.log
SlurmctldPort=6817
SlurmdPort=6818
SlurmdSpoolDir=$SLURM_DIR/slurmd.%n
SlurmdPidFile=$SLURM_DIR/slurmd.%n.pid
SlurmdLogFile=$SLURM_DIR/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MailProg=/bin/true
$1
EOF2
}

slurm_ctld_start() {
  local _
  # exec: the job is slurmctld itself, a child of the test's shell (kill_child).
  (exec env SLURM_CONF="$SLURM_DIR/slurm.conf" nsenter -t "$_slurm_ns_pid" -u -m -n \
    slurmctld -D -f "$SLURM_DIR/slurm.conf" > "$SLURM_DIR/slurmctld.out" 2>&1) &
  _slurm_ctld_pid=$!
  # Until it answers (or has ended), at most 60 s.
  for _ in $(seq 600); do
    slurm_in scontrol ping > /dev/null 2>&1 && return 0
    kill -0 "$_slurm_ctld_pid" 2> /dev/null || break
    sleep 0.1
  done
  cat "$SLURM_DIR/slurmctld.out" "$SLURM_DIR/slurmctld.log" >&2 2> /dev/null || :
  fail "slurmctld did not start"
}

slurm_ctld_stop() {
  kill_child "$_slurm_ctld_pid"
  _slurm_ctld_pid=""
}

slurmd_start() {
  mkdir -p "$SLURM_DIR/slurmd.$1"
  (exec env SLURM_CONF="$SLURM_DIR/slurm.conf" nsenter -t "$_slurm_ns_pid" -u -m -n \
    slurmd -D -N "$1" -f "$SLURM_DIR/slurm.conf" > "$SLURM_DIR/slurmd.$1.out" 2>&1) &
  _slurmd_pids="$_slurmd_pids $!"
}

# ---- Slurm on cluster.sh's nodes ----------------------------------------

slurm_client() {
  SLURM_CONF=$SLURM_DIR/slurm.conf nsenter --net="/run/netns/$CLUSTER_HUB" -- "$@"
}

# slurmd_start_in_node I: slurmd of nodeI in its network namespace, host name nodeI.
slurmd_start_in_node() {
  local i=$1 ns
  ns=$(cluster_ns "node$i")
  mkdir -p "$SLURM_DIR/slurmd.node$i"
  # Every step execs the next: the job is slurmd itself (kill_child).
  # nsenter, not 'ip netns exec': slurmd needs this host's /sys/fs/cgroup.
  (exec env SLURM_CONF="$SLURM_DIR/slurm.conf" nsenter --net="/run/netns/$ns" unshare --uts \
    sh -c 'hostname "$0" && exec slurmd -D -N "$0" -f "$1"' "node$i" "$SLURM_DIR/slurm.conf" \
    > "$SLURM_DIR/slurmd.node$i.out" 2>&1) &
  _slurmd_pids="$_slurmd_pids $!"
}

_slurm_all_idle() {
  local n
  n=$(slurm_client sinfo -h -N -t idle -o %N 2> /dev/null | sort -u | wc -l)
  [ "$n" = "$CLUSTER_N" ]
}

slurm_cluster_up() {
  local i nodes="" _
  [ -n "$CLUSTER_HUB" ] || fail "slurm_cluster_up: cluster_up first"
  # The controller's UTS namespace (host name ctl) in the hub's network namespace.
  nsenter --net="/run/netns/$CLUSTER_HUB" unshare --uts --mount sleep infinity &
  _slurm_ns_pid=$!
  for _ in $(seq 100); do
    [ "$(readlink "/proc/$_slurm_ns_pid/ns/uts")" != "$(readlink /proc/self/ns/uts)" ] \
      && [ "$(readlink "/proc/$_slurm_ns_pid/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
    sleep 0.1
  done
  slurm_in hostname ctl
  # One munged for the cluster: every node shares this host's filesystem, so
  # its socket in $SLURM_DIR serves them all (AuthInfo=socket=).
  slurm_munge_start
  # A task's environment gets what the TaskProlog prints as "export NAME=VALUE".
  cat > "$SLURM_DIR/task_prolog.sh" << EOF2
#!/bin/sh
echo "export SPARKCTL_ROOT=$TMP/nodes/\$SLURMD_NODENAME"
EOF2
  chmod +x "$SLURM_DIR/task_prolog.sh"
  for ((i = 0; i < CLUSTER_N; i++)); do
    nodes+="NodeName=node$i NodeAddr=$(cluster_lan_ip "node$i") CPUs=4 RealMemory=1 Gres=gpu:1 State=UNKNOWN
"
    # No GPU here: the Gres is a device file that every node has.
    echo "NodeName=node$i Name=gpu File=/dev/null" >> "$SLURM_DIR/gres.conf"
  done
  # config_overrides: the nodes are what slurm.conf says, not this machine's cores.
  # select/cons_tres: select/linear allocates a job no GPU of the Gres it asks
  # for, and refuses its steps; OverSubscribe=EXCLUSIVE gives whole nodes, as
  # linear does.
  slurm_conf "SlurmctldHost=ctl(198.18.0.1)
${nodes}PartitionName=test Nodes=ALL Default=YES State=UP MaxTime=INFINITE OverSubscribe=EXCLUSIVE
SlurmdParameters=config_overrides
SelectType=select/cons_tres
GresTypes=gpu
TaskProlog=$SLURM_DIR/task_prolog.sh
KillWait=5
MessageTimeout=5
ReturnToService=2
${1:-}"
  slurm_ctld_start
  for ((i = 0; i < CLUSTER_N; i++)); do slurmd_start_in_node "$i"; done
  local p
  for _ in $(seq 600); do
    _slurm_all_idle && return 0
    for p in $_slurmd_pids; do kill -0 "$p" 2> /dev/null || break 2; done
    sleep 0.1
  done
  slurm_client sinfo -N >&2 || :
  cat "$SLURM_DIR"/slurmd.node*.out "$SLURM_DIR"/slurmd.node*.log >&2 2> /dev/null || :
  fail "the Slurm nodes did not become idle"
}
