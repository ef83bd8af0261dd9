#!/usr/bin/env bash
# The fake cluster of tests/cluster/cluster.sh itself: 2 nodes on one cable,
# then 3 and 8 on a fabric switch.  Every node answers over ssh with its own
# tree (a remote 'sparkctl topo' describes the node's live interfaces), the
# twins carry 9000-byte frames on each rail until an MTU is lowered, the
# faults the library plants (node down or unreachable, key refused, twins in
# one subnet) show, and nothing is left behind, however the test ends.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
command -v ping > /dev/null 2>&1 || {
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "no 'ping' (Debian package iputils-ping)"
  skip "no 'ping' (Debian package iputils-ping)"
}

IF0=enp1s0f1np1
IF1=enP2p1s0f1np1

ms() { echo $(($(date +%s%N) / 1000000)); }
host_links() { ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }
host_links > "$TMP/links-before"
# no_host_links: no link of a cluster has appeared in this host's namespace.
no_host_links() {
  host_links > "$TMP/links-now"
  if comm -13 "$TMP/links-before" "$TMP/links-now" \
    | grep -E '^(n[0-9]+(lan|r[01])|lan|rail[01]|enp1s0f1np1|enP2p1s0f1np1|enP7s7)$'; then
    fail "links of a cluster are in this host's namespace"
  fi
}

# timed_up N: cluster_up N, noting how long it took.
timed_up() {
  local t0
  t0=$(ms)
  cluster_up "$1"
  note "cluster_up $1: $(($(ms) - t0)) ms"
}

# df_ping NODE IF ADDRESS: a 9000-byte frame, not fragmented, from NODE's IF.
df_ping() {
  cluster_exec "$1" ping -M "do" -s 8972 -c 1 -W 1 -I "$2" "$3" > /dev/null 2>&1
}
ping_ok() { df_ping "$@" || fail "DF ping from $1 $2 to $3 failed"; }
ping_fails() { ! df_ping "$@" || fail "DF ping from $1 $2 to $3 went through"; }

# topo NODE FILE: 'sparkctl topo --json' on NODE over ssh (the remote PATH's
# sparkctl), checked against the node's live interfaces.
topo() {
  expect 0 "$SPARKCTL_SSH" "$1" -- sparkctl topo --json
  cp "$TMP/out" "$2"
  json_valid inventory "$2"
  local ns i=${1#node} dev
  ns=$(cluster_ns "$1")
  for dev in lo "$CLUSTER_MGMT_IF" $IF0 $IF1; do
    ip -n "$ns" -j address show dev "$dev" > "$2.$dev"
  done
  py "$2" '
node, mgmt, i = args[0], args[1], int(args[2])
want(d["system"]["hostname"], node, "hostname")
want(d["root"], args[3], "root (SPARKCTL_ROOT)")
want(d["problems"], [], "problems")
for dev in (mgmt, "'$IF0'", "'$IF1'"):
    live = json.load(open(args[4] + "." + dev))[0]
    n = nd(dev)
    want(n["address"], live["address"], dev + " MAC")
    want(n["mtu"], live["mtu"], dev + " MTU")
    for fam, key in (("inet", "ipv4"), ("inet6", "ipv6")):
        want(n[key], [{"address": a["local"], "prefix_len": a["prefixlen"]}
                      for a in live["addr_info"] if a["family"] == fam], dev + " " + key)
want(nd(mgmt)["ipv4"], [{"address": "198.18.0.%d" % (10 + i), "prefix_len": 24}], "LAN address")
want(nd(mgmt)["default_route"], True, "default route on the LAN")
for dev in ("'$IF0'", "'$IF1'"):
    for a in nd(dev)["ipv4"]:
        if not a["address"].startswith("198.19."):
            sys.exit("%s has %s" % (dev, a["address"]))
    # The RDMA port of each twin has the GIDs of its addresses.
    port = [p for r in d["rdma_devices"] for p in r["ports"] if p["netdev"] == dev]
    want(len(port), 1, "RDMA ports of " + dev)
    want(sorted(g["ipv4"] for g in port[0]["gids"] if g["ipv4"]),
         sorted(a["address"] for a in nd(dev)["ipv4"] for _ in (1, 2)), "IPv4 GIDs of " + dev)
' "$1" "$CLUSTER_MGMT_IF" "$i" "$(cluster_tree "$1")" "$2"
}

# gone PID TMPDIR: nothing of the cluster of test process PID is left.
gone() {
  if ip netns list | grep -q "^sparkctl-$1-"; then
    ip netns list >&2
    fail "namespaces of process $1 are left"
  fi
  if pgrep -f -- "$2/" > /dev/null; then
    pgrep -a -f -- "$2/" >&2
    fail "processes of the cluster of process $1 are left"
  fi
  [ ! -e "$2" ] || fail "$2 is left"
  no_host_links
}

# ---- 2 nodes, one cable -----------------------------------------------------
timed_up 2
[ "$CLUSTER_FABRIC" = direct ] || fail "2 nodes should be cabled directly"
no_host_links # nothing is made in this host's namespace
for n in node0 node1; do
  expect 0 "$SPARKCTL_SSH" -o BatchMode=yes "$n" -- true
  # shellcheck disable=SC2016
  expect 0 "$SPARKCTL_SSH" "$n" -- 'echo "$SPARKCTL_ROOT"'
  [ "$(cat "$TMP/out")" = "$(cluster_tree "$n")" ] || fail "SPARKCTL_ROOT on $n: $(cat "$TMP/out")"
  expect 0 "$SPARKCTL_SSH" "$n" -- hostname
  [ "$(cat "$TMP/out")" = "$n" ] || fail "hostname of $n: $(cat "$TMP/out")"
done
[ "$(cluster_hosts)" = node0,node1 ] || fail "cluster_hosts: $(cluster_hosts)"

# sparkctl by its path, as a test may run it, reads the node's tree.
expect 0 "$SPARKCTL_SSH" node0 -- "$SPARKCTL" topo --json
py "$TMP/out" '
want(d["system"]["hostname"], "node0", "hostname")
want(nd("'$IF0'")["ipv4"], [{"address": "198.19.177.11", "prefix_len": 24}], "ipv4 of '$IF0'")
want(nd("'$IF1'")["ipv4"], [{"address": "198.19.178.11", "prefix_len": 24}], "ipv4 of '$IF1'")
'
topo node0 "$TMP/n0.json"
topo node1 "$TMP/n1.json"
# Each node is a machine of its own.
py "$TMP/n0.json" '
other = json.load(open(args[0]))
def ids(d):
    return ({r["node_guid"] for r in d["rdma_devices"]}
            | {n["address"] for n in d["netdevs"] if n["name"] != "lo"}
            | {g["uuid"] for g in d["gpu"]["devices"]})
common = ids(d) & ids(other)
if common:
    sys.exit("node0 and node1 share %s" % sorted(common))
' "$TMP/n1.json"

# 9000-byte frames on both rails, both ways.
ping_ok node0 $IF0 198.19.177.12
ping_ok node0 $IF1 198.19.178.12
ping_ok node1 $IF0 198.19.177.11
ping_ok node1 $IF1 198.19.178.11
# A 1500 MTU at one end: those frames no longer pass on that rail.
cluster_set_mtu node1 $IF0 1500
ping_fails node0 $IF0 198.19.177.12
ping_fails node1 $IF0 198.19.177.11
ping_ok node0 $IF1 198.19.178.12
topo node1 "$TMP/n1-mtu.json"
py "$TMP/n1-mtu.json" 'want(nd("'$IF0'")["mtu"], 1500, "mtu in the tree")'
cluster_set_mtu node1 $IF0 9000
ping_ok node0 $IF0 198.19.177.12
# --live-only: the tree still says 9000.
cluster_set_mtu --live-only node0 $IF1 1500
ping_fails node0 $IF1 198.19.178.12
expect 0 "$SPARKCTL_SSH" node0 -- sparkctl topo --json
py "$TMP/out" 'want(nd("'$IF1'")["mtu"], 9000, "mtu in the tree after --live-only")'
ip -n "$(cluster_ns node0)" -o link show dev $IF1 | grep -q " mtu 1500 " \
  || fail "the live MTU of $IF1 on node0 is not 1500"
cluster_set_mtu node0 $IF1 9000
ping_ok node0 $IF1 198.19.178.12

# Both twins in one subnet, live and in the tree.
cluster_same_subnet node1
live=$(cluster_ip node1 $IF1)
[ "$live" = 198.19.177.112 ] || fail "live address of $IF1 on node1: $live"
topo node1 "$TMP/n1-same.json"
py "$TMP/n1-same.json" '
want(nd("'$IF0'")["ipv4"], [{"address": "198.19.177.12", "prefix_len": 24}], "ipv4 of '$IF0'")
want(nd("'$IF1'")["ipv4"], [{"address": "198.19.177.112", "prefix_len": 24}], "ipv4 of '$IF1'")
'

# A refused key, a missing sparkctl.
cluster_refuse_key node1
expect 255 "$SPARKCTL_SSH" node1 -- true
contains "$TMP/err" "Permission denied"
expect 0 "$SPARKCTL_SSH" node0 -- true
cluster_accept_key node1
expect 0 "$SPARKCTL_SSH" node1 -- true
cluster_remote_sparkctl node1 -
expect 127 "$SPARKCTL_SSH" node1 -- sparkctl --version
cluster_remote_sparkctl node1 "$SPARKCTL"
expect 0 "$SPARKCTL_SSH" node1 -- sparkctl --version

# A node whose sshd is down is refused at once; one off the LAN times out.
cluster_node_down node0
t0=$(ms)
expect 255 "$SPARKCTL_SSH" -o ConnectTimeout=2 node0 -- true
took=$(($(ms) - t0))
[ "$took" -lt 2000 ] || fail "ssh to a node that is down took $took ms"
contains "$TMP/err" "Connection refused"
expect 0 "$SPARKCTL_SSH" node1 -- true
cluster_node_up node0
expect 0 "$SPARKCTL_SSH" node0 -- true
cluster_node_unreachable node1
t0=$(ms)
expect 255 "$SPARKCTL_SSH" -o ConnectTimeout=1 node1 -- true
took=$(($(ms) - t0))
[ "$took" -lt 4000 ] || fail "ssh to an unreachable node took $took ms"
note "ssh to an unreachable node failed after $took ms: $(head -c 200 "$TMP/err")"
cluster_node_reachable node1
wait_until 10 "node1 to be reachable again" "$SPARKCTL_SSH" node1 -- true

sshd_pids="${_cluster_sshd_pid[*]}"
cluster_down
gone $$ "$TMP/cluster"
for p in $sshd_pids; do
  ! kill -0 "$p" 2> /dev/null || fail "sshd $p still runs"
done
[ -z "${SPARKCTL_SSH:-}" ] || fail "SPARKCTL_SSH is still set"

# ---- 3 nodes on a fabric switch ---------------------------------------------
timed_up 3
[ "$CLUSTER_FABRIC" = switch ] || fail "3 nodes should be on a switch"
[ "$(cluster_hosts)" = node0,node1,node2 ] || fail "cluster_hosts: $(cluster_hosts)"
for n in node0 node1 node2; do expect 0 "$SPARKCTL_SSH" -o BatchMode=yes "$n" -- true; done
topo node2 "$TMP/s2.json"
for a in 0 1 2; do
  for b in 0 1 2; do
    [ $a != $b ] || continue
    ping_ok node$a $IF0 198.19.177.$((11 + b))
    ping_ok node$a $IF1 198.19.178.$((11 + b))
  done
done
cluster_set_mtu node2 $IF1 1500
ping_fails node0 $IF1 198.19.178.13
ping_ok node0 $IF1 198.19.178.12
ping_ok node0 $IF0 198.19.177.13
# Connection sharing as sparkctl uses it; a master left open is ended by cluster_down.
cm=$CLUSTER_DIR/cm
mkdir "$cm"
for n in node1 node2; do
  expect 0 "$SPARKCTL_SSH" -o ControlMaster=auto -o "ControlPath=$cm/%C" -o ControlPersist=60 \
    -- "$n" true
  expect 0 "$SPARKCTL_SSH" -o "ControlPath=$cm/%C" -O check -- "$n"
done
expect 0 "$SPARKCTL_SSH" -o "ControlPath=$cm/%C" -O exit -- node1
expect 255 "$SPARKCTL_SSH" -o "ControlPath=$cm/%C" -O check -- node1
pgrep -f -- "$cm/" > /dev/null || fail "the master connection to node2 is not running"
cluster_down
gone $$ "$TMP/cluster"

# ---- 8 nodes (the size of doctor's benchmark) -------------------------------
timed_up 8
pids=()
for ((i = 0; i < 8; i++)); do
  "$SPARKCTL_SSH" node$i -- hostname > "$TMP/hostname$i" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < 8; i++)); do
  wait "${pids[$i]}" || { cat "$TMP/hostname$i" >&2; fail "ssh to node$i failed"; }
  [ "$(cat "$TMP/hostname$i")" = node$i ] || fail "hostname of node$i: $(cat "$TMP/hostname$i")"
done
expect 0 "$SPARKCTL_SSH" node7 -- sparkctl topo --json
py "$TMP/out" 'want(d["system"]["hostname"], "node7", "hostname")'
ping_ok node0 $IF0 198.19.177.18
ping_ok node7 $IF1 198.19.178.11
cluster_down
gone $$ "$TMP/cluster"

# ---- the cleanup of a test that ends on its own, or is stopped --------------
cat > "$TMP/child.sh" << 'EOF'
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_up 2
"$SPARKCTL_SSH" node1 -- true
ip netns list > "$1.ns"
echo "$$ $TMP" > "$1.tmp"
mv "$1.tmp" "$1"
if [ "$2" = stay ]; then
  sleep 60 &
  at_exit "kill $!"
  wait $!
fi
EOF
for how in exit stay; do
  bash "$TMP/child.sh" "$TMP/child-$how" "$how" > "$TMP/child-$how.log" 2>&1 &
  child=$!
  wait_until 30 "the child test to bring its cluster up" test -e "$TMP/child-$how"
  read -r cpid ctmp < "$TMP/child-$how"
  [ "$cpid" = "$child" ] || fail "child pid $cpid, expected $child"
  grep -q "^sparkctl-$cpid-node1" "$TMP/child-$how.ns" || fail "the child's cluster was not up"
  [ "$how" = exit ] || kill -TERM "$child"
  rc=0
  wait "$child" || rc=$?
  case $how in
  exit) want=0 ;;
  stay) want=130 ;; # lib.sh's exit status for SIGTERM
  esac
  [ "$rc" = "$want" ] || { cat "$TMP/child-$how.log" >&2; fail "the child test ($how) exited $rc"; }
  gone "$cpid" "$ctmp"
done
