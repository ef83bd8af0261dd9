#!/usr/bin/env bash
# doctor -H's Slurm checks on three namespace nodes with real sshd and a real
# munged per node: each node's slurm.conf (in its tree, read through
# SPARKCTL_ROOT) names its own munged's socket in AuthInfo=socket=, as Slurm
# would use it.  Without slurm.conf doctor says nothing of Slurm; with it,
# everything alike passes, and each planted fault is found on the node it is
# on, with its fix: another munge key, no munged, no unmunge, another
# slurm.conf, another uid in etc/passwd, RealMemory above MemTotal.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
command -v munged > /dev/null && command -v mungekey > /dev/null && command -v unmunge > /dev/null ||
  { [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "no munge (Debian package munge)"; skip "no munge"; }
cluster_up 3
hosts=$(cluster_hosts)

# has TEXT: doctor's report holds TEXT, the columns' runs of blanks taken as one
# ("FAIL slurm.uid user root ...", "fix: ...").
has() {
  tr -s ' ' < "$TMP/out" > "$TMP/squeezed"
  contains "$TMP/squeezed" "$1"
}

# Without slurm.conf on any node: not a word of Slurm, not even a skip.
expect 0 "$SPARKCTL" doctor -H "$hosts" --only slurm,cluster.ssh
lacks "$TMP/out" "slurm"
expect 0 "$SPARKCTL" doctor -H "$hosts" --only slurm,cluster.ssh --json
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["findings"] and not [f for f in d["findings"] if f["check"].startswith("slurm")], d["findings"]' "$TMP/out" ||
  fail "slurm findings without slurm.conf"

# munged_start DIR KEY: a munged with key KEY, its socket DIR/socket.  munged
# forks once its socket is ready: when it returns, the socket answers.
MUNGE=$TMP/munge
_munged_pids=""
munged_stop() { local p; for p in $_munged_pids; do kill "$p" 2> /dev/null || :; done; }
at_exit munged_stop
munged_start() {
  mkdir -p -m 700 "$1"
  # -f: the test's directories are not munged's own (it runs as root here).
  munged -f -S "$1/socket" --key-file="$2" --pid-file="$1/pid" --seed-file="$1/seed" \
    --log-file="$1/log" || fail "munged did not start in $1"
  _munged_pids="$_munged_pids $(cat "$1/pid")"
}
mkdir -p -m 700 "$MUNGE"
mungekey -c -k "$MUNGE/key" -b 1024
mungekey -c -k "$MUNGE/other.key" -b 1024
for i in 0 1 2; do munged_start "$MUNGE/node$i" "$MUNGE/key"; done
munged_start "$MUNGE/odd" "$MUNGE/other.key"

# write_conf NODE [SOCKET]: the node's slurm.conf, the same on every node
# but for node2's RealMemory ($mem2, MiB); it includes auth.conf, the node's
# own, whose AuthInfo names SOCKET (the node's own munged's by default): on
# real nodes the socket has one path everywhere, here each node's munged
# needs its own.
mem2=1000
ctld=node0
write_conf() {
  local tree
  tree=$(cluster_tree "$1")
  mkdir -p "$tree/etc/slurm"
  cat > "$tree/etc/slurm/slurm.conf" << EOF2
ClusterName=sparkctl-test
SlurmctldHost=$ctld
AuthType=auth/munge
Include auth.conf
NodeName=DEFAULT RealMemory=1000 CPUs=20
NodeName=node[0-1]
NodeName=node2 RealMemory=$mem2
PartitionName=sparks Nodes=ALL Default=YES
EOF2
  echo "AuthInfo=socket=${2:-$MUNGE/$1/socket}" > "$tree/etc/slurm/auth.conf"
}
# write_passwd NODE UID [ALICE_UID]: root (the user doctor logs in as) with
# uid UID, and alice (uid 1000 unless given; gid 1000).
write_passwd() {
  printf 'root:x:%s:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\nalice:x:%s:1000::/home/alice:/bin/bash\n' \
    "$2" "${3:-1000}" > "$(cluster_tree "$1")/etc/passwd"
}
all_good() {
  mem2=1000
  for i in 0 1 2; do write_conf node$i; write_passwd node$i 0; done
}
all_good

# Everything alike: each check passes, nothing else.
expect 0 "$SPARKCTL" doctor -H "$hosts" --only slurm
has "PASS slurm.munge a credential of node0 decodes on 3 Slurm nodes"
has "PASS slurm.uid user root is uid 0 gid 0 on 3 Slurm nodes"
has "PASS slurm.conf_same slurm.conf is the same on 3 Slurm nodes"
has "PASS slurm.real_memory node2: RealMemory 1000 MiB, of MemTotal"
lacks "$TMP/out" "FAIL"
lacks "$TMP/out" "SKIP"

# The credential is made on the controller: node1, once slurm.conf says so.
ctld=node1
for i in 0 1 2; do write_conf node$i; done
expect 0 "$SPARKCTL" doctor -H "$hosts" --only slurm.munge
has "PASS slurm.munge a credential of node1 decodes on 3 Slurm nodes"
ctld=node0
for i in 0 1 2; do write_conf node$i; done

# node2's munged has another key: node2 is named, with unmunge's reason and the key's fix.
write_conf node2 "$MUNGE/odd/socket"
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.munge
has "FAIL slurm.munge node2 cannot decode a munge credential of node0: unmunge: Error: Invalid credential"
has "fix: copy /etc/munge/munge.key from node0 to node2 (mode 0400, owner munge"
has "then on node2: sudo systemctl restart munge"
lacks "$TMP/squeezed" "PASS slurm.munge"
grep -c "FAIL  slurm.munge" "$TMP/out" | grep -qx 1 || fail "slurm.munge blamed another node"

# node1 has no munged at its socket: a finding that says so, not a crash.
write_conf node2
write_conf node1 "$MUNGE/none/socket"
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.munge
has "FAIL slurm.munge node1 cannot decode a munge credential of node0: unmunge: Error: Failed to access \"$MUNGE/none/socket\""
has "fix: start munged on node1"
# ... nor at the first node's, which makes the credential: node0 is named.
write_conf node1
write_conf node0 "$MUNGE/none/socket"
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.munge
has "FAIL slurm.munge node0: no credential to try: 'munge -n' failed: munge: Error: Failed to access"
write_conf node0

# node1 has no unmunge at all (what the shell says of a command it cannot find).
printf '#!/bin/sh\necho "sh: 1: unmunge: not found" >&2\nexit 127\n' > "$CLUSTER_DIR/node1/bin/unmunge"
chmod +x "$CLUSTER_DIR/node1/bin/unmunge"
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.munge
has "FAIL slurm.munge node1 cannot decode a munge credential of node0: unmunge is not installed"
has "fix: install munge on node1"
rm "$CLUSTER_DIR/node1/bin/unmunge"

# node1's slurm.conf is not the others': node1 is named, the fix copies the controller's.
echo "# edited by hand" >> "$(cluster_tree node1)/etc/slurm/slurm.conf"
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.conf_same
has "FAIL slurm.conf_same slurm.conf on node1 (sha256 $(sha256sum "$(cluster_tree node1)/etc/slurm/slurm.conf" | cut -c1-12)) differs from the majority's (sha256 $(sha256sum "$(cluster_tree node0)/etc/slurm/slurm.conf" | cut -c1-12), on 2 nodes)"
has "fix: copy slurm.conf from the controller node0 to the others: for n in node1; do scp node0:/etc/slurm/slurm.conf \$n:/etc/slurm/slurm.conf; done"
write_conf node1

# node2's etc/passwd gives the job user another uid.
write_passwd node2 1005
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.uid
has "FAIL slurm.uid user root is uid 1005 gid 0 on node2, but uid 0 gid 0 on node0, node1"
has "fix: on node2: sudo usermod -u 0 -g 0 root"
# --slurm-user names the job user: alice, uid 1001 on node1 alone.
write_passwd node2 0
write_passwd node1 0 1001
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.uid --slurm-user alice
has "FAIL slurm.uid user alice is uid 1001 gid 1000 on node1, but uid 1000 gid 1000 on node0, node2"
has "fix: on node1: sudo usermod -u 1000 -g 1000 alice"
write_passwd node1 0
expect 0 "$SPARKCTL" doctor -H "$hosts" --only slurm.uid --slurm-user alice
has "PASS slurm.uid user alice is uid 1000 gid 1000 on 3 Slurm nodes"
expect 2 "$SPARKCTL" doctor -H "$hosts" --slurm-user "-oProxyCommand=x"
contains "$TMP/err" "--slurm-user: '-oProxyCommand=x' is not a user name"
# ... or has no such user.
printf 'daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n' > "$(cluster_tree node2)/etc/passwd"
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.uid
has "FAIL slurm.uid node2 has no user root"
write_passwd node2 0

# node2's RealMemory is above its MemTotal (every node's slurm.conf says so).
mem2=99999999
for i in 0 1 2; do write_conf node$i; done
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm
has "FAIL slurm.real_memory node2: RealMemory 99999999 MiB is above its MemTotal 125327 MiB: slurmctld drains it (Low RealMemory)"
has "fix: set RealMemory=112795 on node2's NodeName line"
has "PASS slurm.real_memory node0: RealMemory 1000 MiB"
has "PASS slurm.conf_same"
# The same as JSON, with the evidence; the nodes' inventories hold their slurm section.
expect 4 "$SPARKCTL" doctor -H "$hosts" --only slurm.real_memory --json
/usr/bin/python3 "$SRCDIR/tests/validate-json.py" doctor "$TMP/out" || fail "doctor's JSON is not valid"
/usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["status"] == "FAIL"]
assert len(f) == 1 and f[0]["check"] == "slurm.real_memory", f
assert f[0]["evidence"] == {"real_memory_mib": "99999999", "mem_total_mib": "125327"}, f
assert "RealMemory=112795" in f[0]["fix"], f' "$TMP/out" || fail "the JSON finding"
"$SPARKCTL_SSH" node2 -- sparkctl topo --json > "$TMP/node2.json"
/usr/bin/python3 "$SRCDIR/tests/validate-json.py" inventory "$TMP/node2.json" || fail "node2's inventory is not valid"
/usr/bin/python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["slurm"]
assert s["node_name"] == "node2" and s["node_listed"] is True, s
assert s["real_memory_bytes"] == 99999999 << 20 and s["controller"] == "node0", s
assert s["munge_socket"] == sys.argv[2] and s["uid"] == 0 and s["user_source"] == "passwd", s' \
  "$TMP/node2.json" "$MUNGE/node2/socket" || fail "node2's slurm section"
all_good

# node2 runs no Slurm (no slurm.conf): skipped, with why; never a FAIL.
rm "$(cluster_tree node2)/etc/slurm/slurm.conf"
expect 0 "$SPARKCTL" doctor -H "$hosts" --only slurm
has "SKIP slurm.munge node2: not a Slurm node (no slurm.conf"
has "PASS slurm.munge a credential of node0 decodes on 2 Slurm nodes"
has "PASS slurm.conf_same slurm.conf is the same on 2 Slurm nodes"
lacks "$TMP/out" "FAIL"
