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
