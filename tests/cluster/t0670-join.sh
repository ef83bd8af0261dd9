#!/usr/bin/env bash
# 'sparkctl join' on three fresh namespace nodes (real sshd): node2 lets root
# in only with a password (asked once, through SSH_ASKPASS), node0 and node1
# with the test's key.  join leaves a full mesh of key logins, copies no
# private key, changes nothing the second time or with --dry-run, refuses a
# changed host key and a node without sshd with nothing written; then doctor
# and launch with no -H reach all three through the cluster file.
#
# Each node's home is $CLUSTER_DIR/nodeI/home (its sessions' $HOME); its sshd
# runs in a mount namespace of its own where that directory is bound over
# /root, so sshd (AuthorizedKeysFile %h/...) and the node's own ssh client
# (which reads ~/.ssh from the passwd home) see the node's ~/.ssh, never this
# machine's.  node2's sshd also sees a shadow file of its own, with a known
# password for root.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
export TMPDIR=$TMP
cluster_own_homes 2
cluster_up --switch 3
cluster_join_client

# Every file join may write, on every side, with its mode.
sums() {
  local d
  for d in "$HOME" "$CLUSTER_DIR"/node{0,1,2}/home; do
    [ -d "$d/.ssh" ] || { echo "$d: no .ssh"; continue; }
    (cd "$d/.ssh" && for f in *; do echo "$d/$f $(stat -c %a "$f") $(sha256sum < "$f")"; done)
  done
  [ ! -f "$SPARKCTL_CLUSTER" ] || sha256sum "$SPARKCTL_CLUSTER"
}
# --dry-run on fresh nodes: every change printed, none made.
sums > "$TMP/sums.before"
expect 0 "$SPARKCTL" join --dry-run node0 node1 node2
contains "$TMP/out" "node0: would create ~/.ssh (0700)"
contains "$TMP/out" "node1: ~/.ssh/authorized_keys (new, 0600):"
contains "$TMP/out" "  + (the key join makes on node2)"
contains "$TMP/out" "node2: ~/.ssh/config (new, 0600):"
contains "$TMP/out" "  + Include sparkctl.conf (at the top)"
contains "$TMP/out" "  + Host node1"
contains "$TMP/out" "(--dry-run: nothing was changed)"
sums > "$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after" || { diff "$TMP/sums.before" "$TMP/sums.after" >&2; fail "--dry-run changed files"; }
[ "$(wc -l < "$TMP/askpass.log")" = 1 ] || fail "the dry run asked for node2's password $(wc -l < "$TMP/askpass.log") times"

# The join: node2's password once, then keys everywhere.
: > "$TMP/askpass.log"
expect 0 "$SPARKCTL" join node0 node1 node2
[ "$(wc -l < "$TMP/askpass.log")" = 1 ] || fail "join asked for node2's password $(wc -l < "$TMP/askpass.log") times"
cluster_full_mesh
# Each node keeps its own key: three different ones, none in another's ~/.ssh.
fps=""
for i in 0 1 2; do
  d=$CLUSTER_DIR/node$i/home/.ssh
  [ "$(stat -c %a "$d")" = 700 ] || fail "node$i: ~/.ssh is not 0700"
  for f in authorized_keys known_hosts config sparkctl.conf id_ed25519; do
    [ "$(stat -c %a "$d/$f")" = 600 ] || fail "node$i: ~/.ssh/$f is $(stat -c %a "$d/$f"), not 0600"
  done
  fps+="$(ssh-keygen -l -f "$d/id_ed25519" | awk '{ print $2 }') "
  [ "$(ls "$d" | grep -c '^id_')" = 2 ] || fail "node$i: other key files in ~/.ssh: $(ls "$d")"
  [ "$(grep -c '^Include sparkctl.conf$' "$d/config")" = 1 ] || fail "node$i: the Include"
  grep -q '^Host \*' "$d/sparkctl.conf" "$d/config" && fail "node$i: Host *"
done
[ "$(echo $fps | tr ' ' '\n' | sort -u | wc -l)" = 3 ] || fail "the nodes share a key: $fps"
# This host reaches node2 by key now: no password the second time.
: > "$TMP/askpass.log"
sums > "$TMP/sums.before"
expect 0 "$SPARKCTL" join node0 node1 node2
contains "$TMP/out" "nothing to change"
[ ! -s "$TMP/askpass.log" ] || fail "the second join asked for a password"
sums > "$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after" || { diff "$TMP/sums.before" "$TMP/sums.after" >&2; fail "the second join changed files"; }
py "$SPARKCTL_CLUSTER" '
want(d["schema_version"], 1, "schema_version")
want(d["plan"], "switch", "plan")
want([n["name"] for n in d["nodes"]], ["node0", "node1", "node2"], "names")
want([n["mgmt_addresses"][0] for n in d["nodes"]], ["198.18.0.10", "198.18.0.11", "198.18.0.12"], "mgmt")
want(sorted(d["nodes"][1]["fabric_addresses"]), ["198.19.177.12", "198.19.178.12"], "fabric")
'
json_valid cluster "$SPARKCTL_CLUSTER"

# A host key that changed: refused, naming the node and the line, nothing written.
kh=$CLUSTER_DIR/node0/home/.ssh/known_hosts
line=$(grep -n '^node1,' "$kh" | cut -d: -f1)
[ -n "$line" ] || fail "node0's known_hosts has no node1 line"
ssh-keygen -q -t ed25519 -N '' -f "$TMP/other_key" < /dev/null
cp "$kh" "$TMP/kh.good"
sed -i "${line}s|ssh-ed25519 .*|$(cut -d' ' -f1,2 "$TMP/other_key.pub")|" "$kh"
sums > "$TMP/sums.before"
expect 4 "$SPARKCTL" join node0 node1 node2
contains "$TMP/err" "node0: ~/.ssh/known_hosts:$line: the host key of node1 changed"
sums > "$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after" || fail "a refused join changed files"

# A node without sshd: exit 3, one line naming it, nothing written anywhere.
cluster_node_down node1
expect 3 "$SPARKCTL" join node0 node1 node2
contains "$TMP/err" "sparkctl join: node1: cannot be reached"
[ "$(wc -l < "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "more than one line for node1"; }
sums > "$TMP/sums.after"
cmp -s "$TMP/sums.before" "$TMP/sums.after" || fail "a join with a node down changed files"
cluster_node_up node1
cp "$TMP/kh.good" "$kh"

# No -H: doctor and launch reach the three nodes of the cluster file.
run "$SPARKCTL" doctor --json --only rdma,cluster.file
[ "$status" = 0 ] || [ "$status" = 4 ] || { cat "$TMP/err" >&2; fail "doctor exited $status"; }
py "$TMP/out" '
want([f["status"] for f in d["findings"] if f["check"] == "cluster.file"], ["PASS"], "cluster.file")
'
py "$TMP/out" '
want(sorted(n["host"] for n in d["nodes"]), ["node0", "node1", "node2"], "doctor nodes")
want([n["inspected"] for n in d["nodes"]], [True] * 3, "inspected")
'
# Without -H, doctor tries the key login of every pair from the nodes themselves.
expect 0 "$SPARKCTL" doctor --only cluster.ssh_mesh
contains "$TMP/out" "6 pairs log in with keys"
ak=$CLUSTER_DIR/node2/home/.ssh/authorized_keys
cp "$ak" "$TMP/ak.good"
grep -vF "$(cut -d' ' -f2 "$CLUSTER_DIR/node0/home/.ssh/id_ed25519.pub")" "$TMP/ak.good" > "$ak"
expect 4 "$SPARKCTL" doctor --only cluster.ssh_mesh
contains "$TMP/out" "no key login (ssh -o BatchMode=yes) for node0 -> node2"
contains "$TMP/out" "fix: sparkctl join node0 node1 node2"
cp "$TMP/ak.good" "$ak"

# The cluster file says other fabric addresses for node1: cluster.file warns.
cp "$SPARKCTL_CLUSTER" "$TMP/cluster.json.good"
expect 0 "$SPARKCTL" cluster add node1 --mgmt 198.18.0.11 --fabric 10.9.9.9
run "$SPARKCTL" doctor --only cluster.file
[ "$status" = 0 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "doctor exited $status on a warning"; }
contains "$TMP/out" "node1: the cluster file lists fabric addresses 10.9.9.9, the node has 198.19.177.12,198.19.178.12"
cp "$TMP/cluster.json.good" "$SPARKCTL_CLUSTER"
expect 0 "$SPARKCTL" launch -- hostname
for i in 0 1 2; do contains "$TMP/out" "node$i"; done
# --local: this node alone.
run "$SPARKCTL" doctor --local --json --only rdma
py "$TMP/out" 'want(len(d["nodes"]), 1, "doctor --local nodes")'
