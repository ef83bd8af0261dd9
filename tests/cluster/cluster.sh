# tests/cluster/cluster.sh - a fake cluster of DGX Spark nodes on this machine,
# for the shell tests of the commands that reach other nodes over ssh
# (doctor, launch, bench link, status).  Sourced after tests/lib.sh:
#
#   . "$SRCDIR/tests/lib.sh"
#   . "$SRCDIR/tests/cluster/cluster.sh"
#   cluster_require                  # root, ip, sshd, ssh ... or skip (fail in CI)
#   cluster_up 2                     # node0, node1 from tests/fixtures/spark-1cable
#   expect 0 "$SPARKCTL" doctor -H "$(cluster_hosts)"
#
# Layout (every name carries the test's pid, so parallel runs never meet):
#
#   sparkctl-PID-hub     the "switch" and the ssh client's side.  Bridge "lan"
#                        holds 198.18.0.1/24; with a switched fabric also the
#                        bridges "rail0" and "rail1" (MTU 9000, no address).
#   sparkctl-PID-nodeI   node I (I = 0..N-1), one network namespace each:
#       MGMT (enP7s7, the fixture's default-route netdev)  198.18.0.(10+I)/24,
#            a veth into the hub's "lan" (hub side nIlan), default route via
#            198.18.0.1;
#       enp1s0f1np1    198.19.177.(11+I)/24  rail 0 } the two twins of the
#       enP2p1s0f1np1  198.19.178.(11+I)/24  rail 1 } Spark's QSFP port, MTU 9000
#
#   The fabric is "direct" for N = 2: each twin is a veth straight to the same
#   twin of the other node (one QSFP cable between two Sparks).  For N != 2 it
#   is "switch": each twin is a veth into its rail's bridge in the hub (hub
#   side nIr0 / nIr1), all nodes on one fabric switch.  'cluster_up --switch 2'
#   puts 2 nodes on a switch too.  $CLUSTER_FABRIC says which it is.
#   Only the benchmarking range 198.18.0.0/15 is used, and nothing at all is
#   created in this host's own namespace: deleting the namespaces removes
#   every link and bridge.
#
# Each node runs a real OpenSSH sshd (/usr/sbin/sshd -D) on MGMT:22, started
# under 'ip netns exec' (its sessions see the node's network and /sys) in a
# UTS namespace of its own (hostname nodeI), with everything in
# $TMP/cluster/nodeI/: host key, sshd_config, authorized_keys, pid file, log.
# Root logs in with the test's client key only.  The sessions get, through
# sshd's SetEnv:
#   SPARKCTL_ROOT=$TMP/nodes/nodeI   so a remote sparkctl reads the node's tree;
#   SPARKCTL_STATE_DIR=$TMP/cluster/nodeI/state   its state (doctor's last report);
#   PATH=$TMP/cluster/nodeI/bin:...  where bin/sparkctl is $SPARKCTL (see
#                                    cluster_remote_sparkctl), so a plain
#                                    'ssh node -- sparkctl ...' works;
#   HOME=$TMP/cluster/nodeI/home     the node's own home ('sparkctl deploy'
#                                    puts sparkctl in ~/.local/bin);
#   SHLVL=1                          so bash, root's shell, does not read
#                                    ~/.bashrc for commands run over ssh
#                                    (sessions do not depend on this
#                                    machine's root account, and stay fast);
#   ASAN_OPTIONS, UBSAN_OPTIONS, LSAN_OPTIONS as the test has them.
#
# The client: $TMP/ssh_config has Host node0..nodeN-1 (HostName = LAN
# address, User root, the client key, a known_hosts pre-filled with the host
# keys, StrictHostKeyChecking yes, IdentitiesOnly yes, BatchMode yes,
# ConnectTimeout 5).  $SPARKCTL_SSH (exported) is $TMP/ssh, a script that
# enters the hub's network namespace (nsenter --net) and runs
# 'ssh -F $TMP/ssh_config "$@"'; so sparkctl, run on this host as it is,
# reaches the nodes through it: "$SPARKCTL_SSH" node1 -- true.
# cluster_client CMD runs any other command on the client's side.
# $SPARKCTL_SSH_CONTROL_DIR (exported) is $TMP/cluster/mux: the ssh masters
# that sparkctl keeps between commands belong to this cluster alone.
#
# Node trees: $TMP/nodes/nodeI is a copy of tests/fixtures/FIXTURE fitted to
# the node by tests/cluster/tree.py: hostname nodeI; its own MAC addresses,
# GUIDs, switch id, link-local GIDs and GPU UUID (byte 3 of the MAC + I;
# node 0 keeps the fixture's); .sparkctl/ip-address.json with the node's live
# addresses on MGMT and the twins (IPv4, and the link-local IPv6 the kernel
# derives from the MAC, which the live veths are given); the IPv4 GIDs of the
# twins' RDMA ports; MGMT's routes in the LAN.  So 'sparkctl topo' on a node
# describes the namespace's real interfaces, with the RDMA devices, GPU and
# the rest of the captured machine.
#
# Functions (nodes are named nodeI or just I):
#   cluster_require, cluster_up [--switch] N [FIXTURE], cluster_down
#   cluster_hosts, cluster_ns, cluster_tree, cluster_lan_ip, cluster_ip
#   cluster_exec NODE CMD..., cluster_client CMD...
#   faults: cluster_set_mtu [--live-only], cluster_node_down / _up,
#   cluster_node_unreachable / _reachable, cluster_refuse_key / _accept_key,
#   cluster_same_subnet, cluster_remote_sparkctl
#   for join: cluster_own_homes (before cluster_up), cluster_join_client,
#   cluster_mesh FROM TO, cluster_full_mesh
# A test that sources this file also has tests/netns/netns.sh's helpers
# (py, wait_until, and a 'run' that fails on sanitizer reports).

. "$SRCDIR/tests/netns/netns.sh"

CLUSTER_RAIL_IF=(enp1s0f1np1 enP2p1s0f1np1)
CLUSTER_RAIL_NET=(198.19.177 198.19.178)
CLUSTER_LAN_NET=198.18.0
CLUSTER_N=0
CLUSTER_HUB=""
CLUSTER_FABRIC=""
CLUSTER_MGMT_IF=""
CLUSTER_FIXTURE=""
CLUSTER_DIR=$TMP/cluster
CLUSTER_TREE_PY=$SRCDIR/tests/cluster/tree.py
CLUSTER_SSHD=/usr/sbin/sshd
_cluster_ns=()
_cluster_sshd_pid=()
_cluster_sshd_extra=""
_cluster_cleanup_set=0
CLUSTER_OWN_HOMES=0
CLUSTER_PASSWORD_NODES=""
CLUSTER_PASSWORD_TOO_NODES=""
CLUSTER_PASSWORD=sparkctl-join-test

# cluster_require: skip (or fail, when SPARKCTL_REQUIRE_ROOT_TESTS=1) unless
# this machine can build a cluster.
cluster_require() {
  require_root
  local why="" c
  [ -x "$CLUSTER_SSHD" ] || why="no $CLUSTER_SSHD (Debian package openssh-server)"
  for c in ssh ssh-keygen nsenter unshare; do
    command -v "$c" > /dev/null 2>&1 || why="no '$c' command"
  done
  if [ -n "$why" ]; then
    [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "$why, and this run requires root tests"
    skip "$why"
  fi
}

# _cluster_idx NODE: the index of nodeI or I (fails on anything else).
_cluster_idx() {
  local i=${1#node}
  case $i in '' | *[!0-9]*) fail "no such cluster node: '$1'" ;; esac
  [ "$i" -lt "$CLUSTER_N" ] || fail "no such cluster node: '$1' (the cluster has $CLUSTER_N)"
  echo "$i"
}

# cluster_ns NODE: the name of the node's network namespace.
cluster_ns() { local i; i=$(_cluster_idx "$1"); echo "${_cluster_ns[$i]}"; }
# cluster_procs NODE: the processes in the node's namespace but its sshd (a
# job's agents, ranks, engines), one "pid command line" each; zombies do
# not count.
cluster_procs() {
  local ns pid comm state
  ns=$(cluster_ns "$1")
  for pid in $(ip netns pids "$ns" 2> /dev/null); do
    comm=$(cat "/proc/$pid/comm" 2> /dev/null) || continue
    state=$(sed 's/.*) //' "/proc/$pid/stat" 2> /dev/null | cut -c1) || continue
    [ "$comm" != sshd ] && [ "$state" != Z ] && echo "$pid $(tr '\0' ' ' < "/proc/$pid/cmdline")"
  done
  return 0
}
# cluster_tree NODE: the node's tree (its SPARKCTL_ROOT).
cluster_tree() { local i; i=$(_cluster_idx "$1"); echo "$TMP/nodes/node$i"; }
# cluster_lan_ip NODE: the node's LAN (ssh) address.
cluster_lan_ip() { local i; i=$(_cluster_idx "$1"); echo "$CLUSTER_LAN_NET.$((10 + i))"; }
# cluster_ip NODE IFNAME: the first IPv4 address IFNAME has now, live.
cluster_ip() {
  local ns
  ns=$(cluster_ns "$1")
  ip -n "$ns" -4 -o address show dev "$2" | awk '{ split($4, a, "/"); print a[1]; exit }'
}
# cluster_hosts: "node0,node1,...", for -H.
cluster_hosts() {
  local i out=""
  for ((i = 0; i < CLUSTER_N; i++)); do out+="${out:+,}node$i"; done
  echo "$out"
}
# cluster_exec NODE CMD...: run CMD in the node's network namespace (not its
# UTS namespace: 'hostname' there is this host's).
cluster_exec() { local ns; ns=$(cluster_ns "$1"); shift; ip netns exec "$ns" "$@"; }
# cluster_client CMD...: run CMD where the ssh client runs (the hub's namespace).
# cluster_pids: the processes in the cluster's namespaces (its nodes and hub),
# one pid per line; what another test runs at the same time is not among them.
cluster_pids() {
  local ns
  for ns in "$CLUSTER_HUB" "${_cluster_ns[@]}"; do ip netns pids "$ns" 2> /dev/null; done
}

cluster_client() { nsenter --net="/run/netns/$CLUSTER_HUB" -- "$@"; }

# cluster_up [--switch] N [FIXTURE]: build the cluster of N nodes from
# tests/fixtures/FIXTURE (default spark-1cable); see the top of this file.
cluster_up() {
  local fabric=""
  [ "${1:-}" != --switch ] || { fabric=switch; shift; }
  local n=${1:?usage: cluster_up [--switch] N [FIXTURE]} fixture=${2:-spark-1cable} i r
  [ -z "$CLUSTER_HUB" ] || fail "cluster_up: a cluster is already up (cluster_down first)"
  case $n in '' | *[!0-9]*) fail "cluster_up: bad node count '$n'" ;; esac
  if [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then fail "cluster_up: 1 to 64 nodes, not $n"; fi
  [ -d "$FIXTURES/$fixture" ] || fail "cluster_up: no fixture tests/fixtures/$fixture"
  if [ -z "$fabric" ]; then
    fabric=switch
    [ "$n" != 2 ] || fabric=direct
  fi
  if [ "$_cluster_cleanup_set" = 0 ]; then
    at_exit cluster_down
    _cluster_cleanup_set=1
  fi
  CLUSTER_N=$n
  CLUSTER_FABRIC=$fabric
  CLUSTER_HUB="sparkctl-$$-hub"
  _cluster_ns=()
  _cluster_sshd_pid=()
  for ((i = 0; i < n; i++)); do _cluster_ns[i]="sparkctl-$$-node$i"; done
  rm -rf "$CLUSTER_DIR" "$TMP/nodes"
  mkdir -p "$CLUSTER_DIR" "$TMP/nodes"

  # The management netdev: the one of the fixture's default route.
  CLUSTER_MGMT_IF=$(awk 'NR > 1 && $2 == "00000000" { print $1; exit }' \
    "$FIXTURES/$fixture/proc/net/route" 2> /dev/null || true)
  CLUSTER_MGMT_IF=${CLUSTER_MGMT_IF:-enP7s7}
  CLUSTER_FIXTURE=$fixture

  # Keys and trees, all nodes at once.
  local pids=() d
  ssh-keygen -q -t ed25519 -N '' -C sparkctl-test-client -f "$TMP/client_key" < /dev/null &
  pids+=($!)
  for ((i = 0; i < n; i++)); do
    d=$CLUSTER_DIR/node$i
    mkdir -p "$d/bin" "$d/home"
    ln -s "$SPARKCTL" "$d/bin/sparkctl"
    ssh-keygen -q -t ed25519 -N '' -C "node$i" -f "$d/ssh_host_ed25519_key" < /dev/null &
    pids+=($!)
    (
      cp -a "$FIXTURES/$fixture" "$TMP/nodes/node$i" &&
        "$PYTHON" "$CLUSTER_TREE_PY" init "$TMP/nodes/node$i" "$i" "node$i" \
          "$CLUSTER_MGMT_IF" "$CLUSTER_LAN_NET.1" \
          "$CLUSTER_MGMT_IF=$CLUSTER_LAN_NET.$((10 + i))/24" \
          "${CLUSTER_RAIL_IF[0]}=${CLUSTER_RAIL_NET[0]}.$((11 + i))/24" \
          "${CLUSTER_RAIL_IF[1]}=${CLUSTER_RAIL_NET[1]}.$((11 + i))/24"
    ) &
    pids+=($!)
  done
  # Meanwhile, the network (it needs no tree: _cluster_mac).
  _cluster_network
  local p bad=0
  for p in "${pids[@]}"; do wait "$p" || bad=1; done
  [ "$bad" = 0 ] || fail "cluster_up: making the keys or the node trees failed"

  _cluster_client_files
  _cluster_sshd_extra=""
  for ((i = 0; i < n; i++)); do _cluster_sshd_config "$i"; done
  # Newer OpenSSH throttles sources that fail to log in; tests do that on purpose.
  if "$CLUSTER_SSHD" -t -f "$CLUSTER_DIR/node0/sshd_config" -o PerSourcePenalties=no \
    > /dev/null 2>&1; then
    _cluster_sshd_extra="-o PerSourcePenalties=no"
  fi
  # sshd's privilege separation directory (the package's tmpfiles.d makes it at boot).
  [ -d /run/sshd ] || mkdir -m 0755 /run/sshd 2> /dev/null || [ -d /run/sshd ] \
    || fail "cannot create /run/sshd"
  for ((i = 0; i < n; i++)); do _cluster_sshd_start "$i"; done
  for ((i = 0; i < n; i++)); do _cluster_sshd_wait "$i"; done

  # Every link has come up (until the kernel's link watch has run, a veth
  # that is up drops what it is given), and node0 lets the client in (all
  # sshd have the same configuration; the others listen, see above).
  wait_until 10 "the cluster's links to come up" _cluster_links_up
  if ! "$SPARKCTL_SSH" node0 true < /dev/null > "$CLUSTER_DIR/node0/check" 2>&1; then
    cat "$CLUSTER_DIR/node0/check" "$CLUSTER_DIR/node0/sshd.log" >&2
    fail "cluster_up: cannot log in to node0 over ssh"
  fi
}

# _cluster_links_up: every link of the cluster's namespaces is up.
_cluster_links_up() {
  local ns
  for ns in "$CLUSTER_HUB" "${_cluster_ns[@]}"; do
    ! ip -n "$ns" -o link show | grep -v -e ' lo:' -e 'state UP' | grep -q . || return 1
  done
}

# The namespaces and links.  One 'ip -batch' per namespace keeps it quick.
_cluster_network() {
  local n=$CLUSTER_N i r ns hub=$CLUSTER_HUB b="$CLUSTER_DIR/ip" mgmt=$CLUSTER_MGMT_IF twin
  ip netns add "$hub" || fail "cannot create network namespace $hub"
  for ((i = 0; i < n; i++)); do
    ip netns add "${_cluster_ns[$i]}" || fail "cannot create network namespace ${_cluster_ns[$i]}"
  done
  {
    echo "link set lo up"
    echo "link add lan type bridge"
    echo "address add $CLUSTER_LAN_NET.1/24 dev lan"
    if [ "$CLUSTER_FABRIC" = switch ]; then
      echo "link add rail0 mtu 9000 type bridge"
      echo "link add rail1 mtu 9000 type bridge"
    fi
    for ((i = 0; i < n; i++)); do
      ns=${_cluster_ns[$i]}
      echo "link add n${i}lan type veth peer name $mgmt$(_cluster_mac "$i" "$mgmt") netns $ns"
      echo "link set n${i}lan master lan up"
      [ "$CLUSTER_FABRIC" = switch ] || continue
      for r in 0 1; do
        twin=${CLUSTER_RAIL_IF[$r]}
        echo "link add n${i}r$r mtu 9000 type veth" \
          "peer name $twin mtu 9000$(_cluster_mac "$i" "$twin") netns $ns"
        echo "link set n${i}r$r master rail$r up"
      done
    done
    echo "link set lan up"
    [ "$CLUSTER_FABRIC" != switch ] || printf 'link set rail0 up\nlink set rail1 up\n'
  } > "$b.hub"
  ip -n "$hub" -batch "$b.hub" || fail "cannot build the cluster's hub"
  if [ "$CLUSTER_FABRIC" = direct ]; then
    # One QSFP cable: each twin of node0 straight to the same twin of node1.
    for twin in "${CLUSTER_RAIL_IF[@]}"; do
      echo "link add $twin mtu 9000$(_cluster_mac 0 "$twin") type veth" \
        "peer name $twin mtu 9000$(_cluster_mac 1 "$twin") netns ${_cluster_ns[1]}"
    done > "$b.cable"
    ip -n "${_cluster_ns[0]}" -batch "$b.cable" || fail "cannot cable node0 to node1"
  fi
  for ((i = 0; i < n; i++)); do
    {
      echo "link set lo up"
      echo "address add $CLUSTER_LAN_NET.$((10 + i))/24 dev $mgmt"
      echo "link set $mgmt up"
      echo "route add default via $CLUSTER_LAN_NET.1 dev $mgmt"
      for r in 0 1; do
        echo "address add ${CLUSTER_RAIL_NET[$r]}.$((11 + i))/24 dev ${CLUSTER_RAIL_IF[$r]}"
        echo "link set ${CLUSTER_RAIL_IF[$r]} up"
      done
    } > "$b.node$i"
    ip -n "${_cluster_ns[$i]}" -batch "$b.node$i" || fail "cannot set up the links of node$i"
  done
}

# _cluster_mac I IFNAME: " address MAC", MAC being that of IFNAME in node I's
# tree: the fixture's, byte 3 increased by I (as tests/cluster/tree.py does).
_cluster_mac() {
  local f="$FIXTURES/$CLUSTER_FIXTURE/sys/class/net/$2/address" mac a b c d e g
  [ -f "$f" ] || return 0
  read -r mac < "$f"
  IFS=: read -r a b c d e g <<< "$mac"
  printf ' address %s:%s:%s:%02x:%s:%s' "$a" "$b" "$c" $(((0x$d + $1) % 256)) "$e" "$g"
}

# The client's key, ssh_config, known_hosts and the $SPARKCTL_SSH wrapper.
_cluster_client_files() {
  local i cfg=$TMP/ssh_config kh=$TMP/known_hosts key
  : > "$kh"
  {
    for ((i = 0; i < CLUSTER_N; i++)); do
      printf 'Host node%d\n  HostName %s.%d\n' "$i" "$CLUSTER_LAN_NET" $((10 + i))
      read -r key < "$CLUSTER_DIR/node$i/ssh_host_ed25519_key.pub"
      echo "node$i,$CLUSTER_LAN_NET.$((10 + i)) ${key% *}" >> "$kh"
    done
    cat << EOF
Host *
  User root
  Port 22
  IdentityFile "$TMP/client_key"
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile "$kh"
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  UpdateHostKeys no
  BatchMode yes
  ConnectTimeout 5
  ControlMaster no
  ControlPath none
  LogLevel ERROR
EOF
  } > "$cfg"
  {
    echo '#!/bin/sh'
    echo '# ssh into the sparkctl test cluster (tests/cluster/cluster.sh)'
    printf 'exec nsenter --net=%s -- ssh -F %s "$@"\n' \
      "$(_cluster_shq "/run/netns/$CLUSTER_HUB")" "$(_cluster_shq "$cfg")"
  } > "$TMP/ssh"
  chmod +x "$TMP/ssh"
  export SPARKCTL_SSH="$TMP/ssh"
  # The ssh masters that outlive one command live with this cluster (and die with its hub).
  mkdir -m 700 "$CLUSTER_DIR/mux"
  export SPARKCTL_SSH_CONTROL_DIR="$CLUSTER_DIR/mux"
}

# _cluster_shq STRING: STRING quoted for sh.
_cluster_shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

_cluster_sshd_config() {
  local i=$1 d=$CLUSTER_DIR/node$1 v env=""
  local path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  cp "$TMP/client_key.pub" "$d/authorized_keys"
  for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
    [ -z "${!v:-}" ] || env+=" \"$v=${!v}\""
  done
  cat > "$d/sshd_config" << EOF
# sshd of node$i of a sparkctl test cluster (tests/cluster/cluster.sh)
ListenAddress $CLUSTER_LAN_NET.$((10 + i)):22
AddressFamily inet
HostKey "$d/ssh_host_ed25519_key"
PidFile "$d/sshd.pid"
AuthorizedKeysFile "$d/authorized_keys"
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
SetEnv "SPARKCTL_ROOT=$TMP/nodes/node$i" "SPARKCTL_STATE_DIR=$d/state" "PATH=$d/bin:$path" "HOME=$d/home" SHLVL=1$env
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowAgentForwarding no
MaxStartups 100:30:200
MaxSessions 100
LoginGraceTime 30
LogLevel VERBOSE
Subsystem sftp internal-sftp
EOF
  [ "$CLUSTER_OWN_HOMES" = 1 ] || return 0
  sed -i -e "s|^AuthorizedKeysFile .*|AuthorizedKeysFile \"$d/authorized_keys\" .ssh/authorized_keys|" \
    "$d/sshd_config"
  case " $CLUSTER_PASSWORD_NODES $CLUSTER_PASSWORD_TOO_NODES " in *" $i "*) ;; *) return 0 ;; esac
  case " $CLUSTER_PASSWORD_NODES " in *" $i "*) : > "$d/authorized_keys" ;; esac
  sed -i -e 's/^PasswordAuthentication no/PasswordAuthentication yes/' \
    -e 's/^PermitRootLogin .*/PermitRootLogin yes/' "$d/sshd_config"
  local hash
  hash=$(openssl passwd -6 "$CLUSTER_PASSWORD")
  awk -F: -v h="$hash" 'BEGIN { OFS = ":" } $1 == "root" { $2 = h } { print }' /etc/shadow \
    > "$d/shadow"
  chmod 600 "$d/shadow"
}

_cluster_sshd_start() {
  local i=$1 d=$CLUSTER_DIR/node$1
  rm -f "$d/sshd.pid"
  # shellcheck disable=SC2086,SC2016
  # 'ip netns exec' gives the node a /sys of its own, without the cgroup v2
  # hierarchy a real node has mounted there (launch contains jobs in it).
  # With cluster_own_homes, a mount namespace of its own too: the node's home
  # over /root, its shadow file (when it takes a password) over /etc/shadow.
  if [ "$CLUSTER_OWN_HOMES" = 1 ]; then
    ip netns exec "${_cluster_ns[$i]}" unshare --uts -m -- \
      sh -c 'hostname "$0" && { mount -t cgroup2 cgroup2 /sys/fs/cgroup 2> /dev/null || :; } &&
        mount --bind "$1" /root && { [ ! -f "$2" ] || mount --bind "$2" /etc/shadow; } &&
        shift 2 && exec "$@"' "node$i" "$d/home" "$d/shadow" \
      "$CLUSTER_SSHD" -D -f "$d/sshd_config" -E "$d/sshd.log" $_cluster_sshd_extra \
      < /dev/null > /dev/null 2>&1 &
  else
    ip netns exec "${_cluster_ns[$i]}" unshare --uts -- \
      sh -c 'hostname "$0" && { mount -t cgroup2 cgroup2 /sys/fs/cgroup 2> /dev/null || :; } && exec "$@"' "node$i" \
      "$CLUSTER_SSHD" -D -f "$d/sshd_config" -E "$d/sshd.log" $_cluster_sshd_extra \
      < /dev/null > /dev/null 2>&1 &
  fi
  _cluster_sshd_pid[i]=$!
}

# sshd writes its pid file once it listens.
_cluster_sshd_wait() {
  local i=$1 d=$CLUSTER_DIR/node$1 k=0
  while [ ! -s "$d/sshd.pid" ]; do
    if ! kill -0 "${_cluster_sshd_pid[$i]}" 2> /dev/null; then
      cat "$d/sshd.log" >&2 2> /dev/null
      fail "the sshd of node$i exited"
    fi
    k=$((k + 1))
    [ "$k" -le 1000 ] || fail "the sshd of node$i did not start in 10 s"
    sleep 0.01
  done
}

_cluster_sshd_stop() {
  local pid=${_cluster_sshd_pid[$1]:-}
  [ -n "$pid" ] || return 0
  _cluster_sshd_pid[$1]=""
  _cluster_kill "$pid"
  wait "$pid" 2> /dev/null || true
}

# _cluster_kill PID...: SIGTERM, then SIGKILL what still runs after 1 s.
_cluster_kill() {
  local p k alive="$*"
  # shellcheck disable=SC2086
  kill $alive 2> /dev/null || true
  for ((k = 0; k < 100; k++)); do
    # shellcheck disable=SC2086
    set -- $alive
    alive=""
    for p; do ! _cluster_alive "$p" || alive+=" $p"; done
    [ -n "$alive" ] || return 0
    sleep 0.01
  done
  # shellcheck disable=SC2086
  kill -KILL $alive 2> /dev/null || true
}

# _cluster_alive PID: the process exists and is not a zombie.
_cluster_alive() {
  local stat
  read -r stat 2> /dev/null < "/proc/$1/stat" || return 1
  stat=${stat##*) }
  [ "${stat%% *}" != Z ]
}

# cluster_down: stop every sshd and session, delete the namespaces and the
# client's files.  cluster_up registers it with at_exit; a test may call it
# to build another cluster.  It is quick (a test stopped by 'meson test' has
# half a second before it is killed).
cluster_down() {
  [ -n "$CLUSTER_HUB" ] || return 0
  local i ns victims="" sshd=""
  for ((i = 0; i < CLUSTER_N; i++)); do sshd+=" ${_cluster_sshd_pid[$i]:-}"; done
  _cluster_sshd_pid=()
  # Whatever runs in the namespaces (sshd, sessions, clients) was started by this test.
  for ns in "$CLUSTER_HUB" "${_cluster_ns[@]}"; do
    [ ! -e "/run/netns/$ns" ] || victims+=" $(ip netns pids "$ns" 2> /dev/null)"
  done
  # shellcheck disable=SC2086
  [ -z "${victims// /}" ] || _cluster_kill $victims
  for i in $sshd; do wait "$i" 2> /dev/null || true; done
  for ns in "$CLUSTER_HUB" "${_cluster_ns[@]}"; do echo "netns del $ns"; done \
    | ip -force -batch - 2> /dev/null || true
  rm -rf "$CLUSTER_DIR" "$TMP/nodes" "$TMP/ssh" "$TMP/ssh_config" "$TMP/known_hosts" \
    "$TMP/client_key" "$TMP/client_key.pub"
  unset SPARKCTL_SSH SPARKCTL_SSH_CONTROL_DIR
  CLUSTER_HUB=""
  CLUSTER_N=0
  CLUSTER_FABRIC=""
  _cluster_ns=()
}

# cluster_set_mtu [--live-only] NODE IFNAME MTU: set the MTU of the node's
# IFNAME, live and in its tree (with --live-only, live only).
cluster_set_mtu() {
  local tree_too=1
  [ "$1" != --live-only ] || { tree_too=0; shift; }
  local ns tree
  ns=$(cluster_ns "$1")
  tree=$(cluster_tree "$1")
  ip -n "$ns" link set dev "$2" mtu "$3" || fail "cannot set the MTU of $2 on $1 to $3"
  if [ "$tree_too" = 1 ] && [ -f "$tree/sys/class/net/$2/mtu" ]; then
    printf '%s\n' "$3" > "$tree/sys/class/net/$2/mtu"
  fi
}

# cluster_node_down NODE: stop the node's sshd (connections are refused).
cluster_node_down() { local i; i=$(_cluster_idx "$1"); _cluster_sshd_stop "$i"; }
# cluster_node_up NODE: start it again.
cluster_node_up() {
  local i
  i=$(_cluster_idx "$1")
  [ -z "${_cluster_sshd_pid[$i]:-}" ] || return 0
  _cluster_sshd_start "$i"
  _cluster_sshd_wait "$i"
}

# cluster_node_unreachable NODE: the node's LAN link goes down (connections
# time out instead of being refused); cluster_node_reachable NODE undoes it.
cluster_node_unreachable() {
  local i
  i=$(_cluster_idx "$1")
  ip -n "$CLUSTER_HUB" link set "n${i}lan" down
}
cluster_node_reachable() {
  local i
  i=$(_cluster_idx "$1")
  ip -n "$CLUSTER_HUB" link set "n${i}lan" up
}

# cluster_refuse_key NODE: the node no longer accepts the client's key;
# cluster_accept_key NODE: it does again.
cluster_refuse_key() {
  local i
  i=$(_cluster_idx "$1")
  : > "$CLUSTER_DIR/node$i/authorized_keys"
}
cluster_accept_key() {
  local i
  i=$(_cluster_idx "$1")
  cp "$TMP/client_key.pub" "$CLUSTER_DIR/node$i/authorized_keys"
}

# cluster_same_subnet NODE: both twins of the node in one subnet (a common
# misconfiguration): enP2p1s0f1np1 moves from 198.19.178.(11+I) to
# 198.19.177.(111+I)/24, beside enp1s0f1np1's 198.19.177.(11+I); live and in
# the tree (addresses and GIDs).
cluster_same_subnet() {
  local i ns if1=${CLUSTER_RAIL_IF[1]} cidr
  i=$(_cluster_idx "$1")
  ns=${_cluster_ns[$i]}
  cidr=${CLUSTER_RAIL_NET[0]}.$((111 + i))/24
  ip -n "$ns" -4 address flush dev "$if1"
  ip -n "$ns" address add "$cidr" dev "$if1" || fail "cannot re-address $if1 of node$i"
  "$PYTHON" "$CLUSTER_TREE_PY" addr "$TMP/nodes/node$i" "$if1" "$cidr" \
    || fail "cannot re-address $if1 in the tree of node$i"
}

# cluster_remote_sparkctl NODE PROGRAM: the node's 'sparkctl' (in its
# sessions' PATH) becomes PROGRAM - e.g. a script that prints another
# version; with PROGRAM "-" the node has no sparkctl at all.
cluster_remote_sparkctl() {
  local i
  i=$(_cluster_idx "$1")
  rm -f "$CLUSTER_DIR/node$i/bin/sparkctl"
  [ "$2" = - ] || ln -s "$2" "$CLUSTER_DIR/node$i/bin/sparkctl"
}

# ---- for the tests of 'sparkctl join' ----

# cluster_own_homes [PASSWORD-ONLY [PASSWORD-TOO]]: call before cluster_up.
# Each node's home is $CLUSTER_DIR/nodeI/home (its sessions' $HOME); its sshd
# runs in a mount
# namespace of its own where that directory is bound over /root, so sshd
# (AuthorizedKeysFile %h/...) and the node's own ssh client (which reads
# ~/.ssh from the passwd home) see the node's ~/.ssh, never this machine's.
# The nodes of PASSWORD-ONLY (indexes, blank separated) let root in only with
# the password $CLUSTER_PASSWORD (a shadow file of their own), not with the
# test's key; those of PASSWORD-TOO with either.
cluster_own_homes() {
  command -v openssl > /dev/null 2>&1 || skip "no openssl (for a password hash)"
  command -v ssh-keyscan > /dev/null 2>&1 || skip "no ssh-keyscan"
  CLUSTER_OWN_HOMES=1
  CLUSTER_PASSWORD_NODES=${1:-}
  CLUSTER_PASSWORD_TOO_NODES=${2:-}
}

# cluster_join_client: this host's side of a join, after cluster_up.  Its
# ~/.ssh is $TMP/home/.ssh (HOME): join's own steps here use $HOME, and
# $SPARKCTL_SSH offers that key besides the rig's.  Passwords come from
# SSH_ASKPASS, which counts its calls in $TMP/askpass.log; it accepts a host
# key ssh does not know yet (the prompts in $TMP/askpass-hostkey.log).  The
# cluster file is $TMP/cluster.json (SPARKCTL_CLUSTER).
cluster_join_client() {
  export HOME=$TMP/home
  mkdir -p "$HOME"
  cat > "$TMP/ssh-join" << EOF
#!/bin/sh
exec "$SPARKCTL_SSH" -i "$HOME/.ssh/id_ed25519" "\$@"
EOF
  chmod +x "$TMP/ssh-join"
  export SPARKCTL_SSH=$TMP/ssh-join
  cat > "$TMP/askpass" << EOF
#!/bin/sh
case "\$1" in *"continue connecting"*)
  echo "\$1" >> "$TMP/askpass-hostkey.log"; echo yes; exit 0 ;;
esac
echo asked >> "$TMP/askpass.log"
echo "$CLUSTER_PASSWORD"
EOF
  chmod +x "$TMP/askpass"
  export SSH_ASKPASS=$TMP/askpass SSH_ASKPASS_REQUIRE=force DISPLAY=:0
  : > "$TMP/askpass.log"
  export SPARKCTL_CLUSTER=$TMP/cluster.json
}

# cluster_mesh FROM TO: a key login from node FROM to node TO (names), batch
# mode, through FROM's own ~/.ssh/config (its Include and Host blocks);
# prints what 'hostname' says there.
cluster_mesh() {
  cluster_exec "$1" unshare -m sh -c 'mount --bind "$0" /root && HOME=/root exec ssh \
    -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=5 "$1" hostname' \
    "$CLUSTER_DIR/$1/home" "$2"
}

# cluster_full_mesh: every node logs in to every other with its key, by name.
cluster_full_mesh() {
  local a b out
  for ((a = 0; a < CLUSTER_N; a++)); do
    for ((b = 0; b < CLUSTER_N; b++)); do
      [ "$a" != "$b" ] || continue
      out=$(cluster_mesh "node$a" "node$b") || fail "node$a cannot log in to node$b with its key"
      [ "$out" = "node$b" ] || fail "node$a reached '$out', not node$b"
    done
  done
}
