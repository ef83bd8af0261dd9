#!/usr/bin/env bash
# The whole path of a new cluster, on three fresh namespace nodes (real sshd,
# and a real avahi-daemon each, advertising the _sparkctl._tcp file that
# 'sparkctl publish' wrote into the node's tree): 'sparkctl discover' on
# node0 lists the other two with their ids; 'sparkctl join --discovered',
# run on the client's side (the hub of the rig: discover asks on its "lan"
# bridge, where every node's management port is), finds the three, reaches
# each at the address it answered with and names it by its host name,
# leaves a full mesh of key logins (node2 takes a password, asked once) and
# a cluster file with the nodes' names, ids and addresses; then doctor and
# launch with no -H reach all three through that file.  Then on node0 itself
# (its network, home and tree), join --discovered --mgmt joins node0 too (it
# answers as this host), and launch and doctor there reach all three.
#
# The nodes' homes, password login and the client's side are the rig's
# (tests/cluster/cluster.sh: cluster_own_homes, cluster_join_client), as in
# t0670-join.sh; avahi-daemon is tests/discover/avahi.sh's.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
. "$SRCDIR/tests/discover/avahi.sh"
export TMPDIR=$TMP
cluster_own_homes 2 0
cluster_up --switch 3
cluster_join_client
HUB_NS=$CLUSTER_HUB

# Nothing answers yet (no avahi runs): exit 3, one line, nothing written.
run ip netns exec "$HUB_NS" "$SPARKCTL" join --discovered --iface lan --reply-timeout 0.3
[ "$status" = 3 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "join --discovered with no answer exited $status"; }
contains "$TMP/err" "sparkctl join: no Sparks answered on lan (sparkctl discover to see what answers)"
[ ! -e "$SPARKCTL_CLUSTER" ] || fail "a join that found nobody wrote the cluster file"
[ ! -e "$HOME/.ssh" ] || fail "a join that found nobody made ~/.ssh"

# Each node advertises _sparkctl._tcp (publish makes its id, in its tree,
# where the node's inventory reads it) on its management port and both
# fabric twins.
for i in 0 1 2; do
  tree=$(cluster_tree node$i)
  expect 0 "$SPARKCTL" publish --root "$tree"
  eval "ID$i=\$(cat \"\$tree/etc/sparkctl/node-id\")"
  start_avahi "$(cluster_ns node$i)" node$i "$CLUSTER_MGMT_IF,${CLUSTER_RAIL_IF[0]},${CLUSTER_RAIL_IF[1]}" \
    "$tree/etc/avahi/services"
done

# discover on node0, with its defaults (its fabric ports): the other two,
# each once, with the ids publish made; node0 itself marked as this host.
run ip netns exec "$(cluster_ns node0)" env SPARKCTL_ROOT="$(cluster_tree node0)" \
  "$SPARKCTL" discover --json
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "discover on node0 exited $status"; }
json_valid discover "$TMP/out"
py "$TMP/out" "
want(d['chosen_by'], 'fabric', 'the interfaces discover chose')
others = sorted((h['host'], h['id']) for h in d['hosts'] if not h['this_host'])
want(others, [('node1', '$ID1'), ('node2', '$ID2')], 'the other nodes')
want([h['host'] for h in d['hosts'] if h['this_host']], ['node0'], 'this host')
"

# --dry-run: the three found, every change printed, none made.  (The joins
# collect answers for 2 s, so a busy machine's late answers still count.)
run ip netns exec "$HUB_NS" "$SPARKCTL" join --discovered --iface lan --reply-timeout 2 --dry-run
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "join --discovered --dry-run exited $status"; }
for i in 0 1 2; do contains "$TMP/out" "found node$i at 198.18.0.1$i (lan)"; done
contains "$TMP/out" "  + Host node1"
contains "$TMP/out" "(--dry-run: nothing was changed)"
[ ! -e "$SPARKCTL_CLUSTER" ] || fail "--dry-run wrote the cluster file"

# The join: node2's password once, then a full mesh of key logins by name.
: > "$TMP/askpass.log"
run ip netns exec "$HUB_NS" "$SPARKCTL" join --discovered --iface lan --reply-timeout 2
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "join --discovered exited $status"; }
[ "$(wc -l < "$TMP/askpass.log")" = 1 ] || fail "join asked for node2's password $(wc -l < "$TMP/askpass.log") times"
cluster_full_mesh
for i in 0 1 2; do
  conf=$CLUSTER_DIR/node$i/home/.ssh/sparkctl.conf
  for j in 0 1 2; do
    grep -A1 "^Host node$j\$" "$conf" | grep -q "HostName 198.18.0.1$j\$" \
      || { cat "$conf" >&2; fail "node$i: no Host block maps node$j to 198.18.0.1$j"; }
  done
done
py "$SPARKCTL_CLUSTER" "
want([n['name'] for n in d['nodes']], ['node0', 'node1', 'node2'], 'names')
want([n['id'] for n in d['nodes']], ['$ID0', '$ID1', '$ID2'], 'ids')
want([n['mgmt_addresses'][0] for n in d['nodes']], ['198.18.0.10', '198.18.0.11', '198.18.0.12'], 'mgmt')
want(sorted(d['nodes'][2]['fabric_addresses']), ['198.19.177.13', '198.19.178.13'], 'fabric')
want(d['plan'], 'switch', 'plan')
"
json_valid cluster "$SPARKCTL_CLUSTER"

# Again: nothing to change, no password.
: > "$TMP/askpass.log"
run ip netns exec "$HUB_NS" "$SPARKCTL" join --discovered --iface lan --reply-timeout 2
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "the second join --discovered exited $status"; }
contains "$TMP/out" "nothing to change"
[ ! -s "$TMP/askpass.log" ] || fail "the second join asked for a password"

# No -H: doctor and launch reach the three nodes of the cluster file.
run "$SPARKCTL" doctor --json --only rdma,cluster.file
[ "$status" = 0 ] || [ "$status" = 4 ] || { cat "$TMP/err" >&2; fail "doctor exited $status"; }
py "$TMP/out" "
want(sorted(n['host'] for n in d['nodes']), ['node0', 'node1', 'node2'], 'doctor nodes')
want([n['inspected'] for n in d['nodes']], [True] * 3, 'inspected')
want([f['status'] for f in d['findings'] if f['check'] == 'cluster.file'], ['PASS'], 'cluster.file')
"
expect 0 "$SPARKCTL" doctor --only cluster.ssh_mesh
contains "$TMP/out" "6 pairs log in with keys"
expect 0 "$SPARKCTL" launch -- hostname
for i in 0 1 2; do contains "$TMP/out" "node$i"; done

# On node0 itself (its network, its home over /root, its tree, plain ssh):
# join --discovered --mgmt joins this host with the other two.  ssh meets
# node0's own host key at 198.18.0.10 for the first time (accepted through
# SSH_ASKPASS), and node0 does not take its own key yet: one password (node0
# takes the test's key or a password), for node0.
on_node0() {
  cluster_exec node0 unshare -m sh -c 'mount --bind "$0" /root && exec "$@"' \
    "$CLUSTER_DIR/node0/home" env -u SPARKCTL_SSH -u SPARKCTL_SSH_CONTROL_DIR HOME=/root \
    SPARKCTL_ROOT="$(cluster_tree node0)" SPARKCTL_CLUSTER=/root/cluster.json "$SPARKCTL" "$@"
}
: > "$TMP/askpass.log"
run on_node0 join --discovered --mgmt --reply-timeout 2
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "join --discovered on node0 exited $status"; }
contains "$TMP/out" "found node0 at 198.18.0.10 ($CLUSTER_MGMT_IF): this host"
contains "$TMP/out" "found node2 at 198.18.0.12 ($CLUSTER_MGMT_IF)"
[ "$(wc -l < "$TMP/askpass.log")" = 1 ] || fail "join on node0 asked for passwords $(wc -l < "$TMP/askpass.log") times, not 1"
py "$CLUSTER_DIR/node0/home/cluster.json" "
want([n['name'] for n in d['nodes']], ['node0', 'node1', 'node2'], 'names on node0')
want([n['id'] for n in d['nodes']], ['$ID0', '$ID1', '$ID2'], 'ids on node0')
"
cluster_full_mesh
# From node0, with no -H: every node of its cluster file, node0 included.
run on_node0 launch -- hostname
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "launch on node0 exited $status"; }
for i in 0 1 2; do contains "$TMP/out" "node$i"; done
run on_node0 doctor --only cluster.ssh_mesh
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "doctor on node0 exited $status"; }
contains "$TMP/out" "6 pairs log in with keys"
