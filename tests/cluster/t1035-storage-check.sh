#!/usr/bin/env bash
# 'sparkctl storage check -H' across namespace nodes with real sshd, each node's
# SPARKCTL_ROOT a tree with the shared volume (tests/fixtures/storage-tree.sh):
# one writer and distinct host NQNs pass; two nodes cloned from one image (the
# same /etc/nvme/hostnqn), both mounting the volume read-write, fail
# storage.hostnqn_unique and storage.single_writer (exit 4); a node down is exit 3.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
cluster_up 2
hosts=$(cluster_hosts)
export TMPDIR=$TMP

# storage_node NODE ACCESS HOSTNQN: give NODE's tree the volume, its path from its rail address.
storage_node() {
  local t src
  t=$(cluster_tree "$1")
  src=$(cluster_ip "$1" enp1s0f1np1)
  "$SRCDIR/tests/fixtures/storage-tree.sh" "$t" "$TMP/storage-$1" "$1" "$2" "$3"
  sed -i "s/src_addr=[0-9.]*/src_addr=$src/" \
    "$TMP/storage-$1"/sys/devices/virtual/nvme-fabrics/ctl/nvme*/address
  rm -rf "$t"
  mv "$TMP/storage-$1" "$t"
}

# As planned: node0 writes, node1 reads, each with its own host NQN.
storage_node node0 rw nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000000
storage_node node1 ro nqn.2014-08.org.nvmexpress:uuid:11111111-1111-4111-8111-111111111111
expect 0 "$SPARKCTL" storage check -H "$hosts"
lacks "$TMP/out" FAIL
contains "$TMP/out" "PASS  storage.hostnqn_unique  2 distinct host NQNs"
contains "$TMP/out" "PASS  storage.single_writer"
[ "$(grep -c 'PASS  storage.mounted' "$TMP/out")" = 2 ] || fail "both nodes should have the volume mounted"
lacks "$TMP/out" "fabric."
expect 0 "$SPARKCTL" storage check -H "$hosts" --json
json_valid doctor "$TMP/out"

# Cloned: the same host NQN on both, and node1 mounts the volume read-write too.
nqn=nqn.2014-08.org.nvmexpress:uuid:5a5a5a5a-0000-4000-8000-00000000c10e
storage_node node0 rw "$nqn"
storage_node node1 rw "$nqn"
expect 4 "$SPARKCTL" storage check -H "$hosts"
contains "$TMP/out" "FAIL  storage.hostnqn_unique  node0 and node1 have the same host NQN $nqn"
contains "$TMP/out" "fix: on one of them: nvme gen-hostnqn | sudo tee /etc/nvme/hostnqn"
contains "$TMP/out" "FAIL  storage.single_writer"
contains "$TMP/out" "2 nodes mount the volume nqn.2026-01.org.example:shared (/mnt/shared) read-write (node0, node1)"
# doctor -H finds them too, among its other checks.
run "$SPARKCTL" doctor -H "$hosts" --only storage
[ "$status" = 4 ] || fail "doctor --only storage exited $status"
contains "$TMP/out" "FAIL  storage.single_writer"

# Two volumes on each node (MODELS=1: /mnt/models too): one writer per volume, told by its
# subsystem.  node0 writes /mnt/shared, node1 reads it; both write /mnt/models.
MODELS=1 storage_node node0 rw nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-000000000000
MODELS=1 storage_node node1 ro nqn.2014-08.org.nvmexpress:uuid:11111111-1111-4111-8111-111111111111
sed -i '\|/mnt/models|s/ ro,noatime,norecovery / rw,noatime /' "$(cluster_tree node1)/proc/self/mounts"
expect 4 "$SPARKCTL" storage check -H "$hosts"
[ "$(grep -c 'FAIL  storage.single_writer' "$TMP/out")" = 1 ] || { cat "$TMP/out" >&2; fail "one volume has two writers"; }
contains "$TMP/out" "2 nodes mount the volume nqn.2026-01.org.example:models (/mnt/models) read-write (node0, node1)"
lacks "$TMP/out" "volume nqn.2026-01.org.example:shared"
grep -Eq "FAIL +storage.mounted +/mnt/models is mounted rw, but the plan makes this node ro" "$TMP/out" ||
  fail "node1's /mnt/models mounted rw"
[ "$(grep -c 'PASS  storage.mounted' "$TMP/out")" = 3 ] || fail "three of the four mounts are as planned"

# A node down: exit 3, whatever the other says.
cluster_node_down node1
expect 3 "$SPARKCTL" storage check -H "$hosts"
