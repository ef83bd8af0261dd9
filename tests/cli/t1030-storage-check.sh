#!/usr/bin/env bash
# 'sparkctl storage check' on host trees: a node with its volume as planned passes
# every check; each planted fault fails its check, with the fix, and exits 4.
# Nodes without a plan: storage check fails storage.conf, doctor says nothing of storage.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
tree() { tests/fixtures/storage-tree.sh tests/fixtures/spark-1cable "$TMP/$1" "${2:-spark-01}" "${3:-rw}" ${4:+"$4"}; }

# All as planned: every check passes (target_reachable is a live probe: no finding on a tree).
tree good
expect 0 "$SPARKCTL" storage check --root "$TMP/good"
for id in conf module hostnqn path_live path_iface iface_mtu mounted nofail; do
  grep -Eq "PASS +storage\.$id " "$TMP/out" || { cat "$TMP/out" >&2; fail "storage.$id did not pass"; }
done
lacks "$TMP/out" "storage.target_reachable"
lacks "$TMP/out" "FAIL"
lacks "$TMP/out" "WARN"
contains "$TMP/out" "8 passed"
# Only the storage checks: none of doctor's others.
lacks "$TMP/out" "fabric."
expect 0 "$SPARKCTL" storage check --root "$TMP/good" --json
json_valid doctor "$TMP/out"
[ "$(json_get "$TMP/out" 'sorted({f["status"] for f in d["findings"]})')" = "['PASS']" ] ||
  fail "not every finding passed"
# The inventory carries it: topo --json, then --from, finds the same.
"$SPARKCTL" topo --root "$TMP/good" --json > "$TMP/good.json"
json_valid inventory "$TMP/good.json"
expect 0 "$SPARKCTL" storage check --from "$TMP/good.json"
contains "$TMP/out" "8 passed"
# A reader mounted read-only as planned passes too.
tree reader spark-02 ro
expect 0 "$SPARKCTL" storage check --root "$TMP/reader"
contains "$TMP/out" "/mnt/shared is mounted ro from /dev/nvme1n1"

# Two volumes (as the seed cluster's /mnt/rosa-storage and /mnt/rosa-models): each check of a
# volume reports each, its message led by the volume's mount point.
MODELS=1 tree two
expect 0 "$SPARKCTL" storage check --root "$TMP/two"
for id in conf path_live path_iface iface_mtu mounted nofail; do
  [ "$(grep -Ec "PASS +storage\.$id " "$TMP/out")" = 2 ] || { cat "$TMP/out" >&2; fail "storage.$id did not pass twice"; }
done
grep -Eq "PASS +storage.path_live +/mnt/models: nvme2 to nqn.2026-01.org.example:models at .* is live" "$TMP/out" || fail "the second volume's path"
grep -Eq "PASS +storage.path_live +/mnt/shared: nvme1 to nqn.2026-01.org.example:shared at .* is live" "$TMP/out" || fail "the first volume's path"
contains "$TMP/out" "14 passed"
# One fine, one faulty: the faulty one's mount point is named, the fine one still passes.
sed -i '\|/mnt/models|d' "$TMP/two/proc/self/mounts"
rm "$TMP/two/sys/class/nvme/nvme2"
expect 4 "$SPARKCTL" storage check --root "$TMP/two"
grep -Eq "FAIL +storage.mounted +nothing is mounted at /mnt/models" "$TMP/out" || { cat "$TMP/out" >&2; fail "the faulty volume's mount"; }
grep -Eq "FAIL +storage.path_live +/mnt/models: no controller to nqn.2026-01.org.example:models" "$TMP/out" || { cat "$TMP/out" >&2; fail "the faulty volume's path"; }
grep -Eq "PASS +storage.mounted +/mnt/shared is mounted rw" "$TMP/out" || fail "the fine volume's mount"
grep -Eq "PASS +storage.path_live +/mnt/shared: " "$TMP/out" || fail "the fine volume's path"
expect 4 "$SPARKCTL" storage check --root "$TMP/two" --json
json_valid doctor "$TMP/out"
[ "$(json_get "$TMP/out" 'sorted((f["status"], f["message"].split(" ")[0]) for f in d["findings"] if f["check"] == "storage.path_live")')" = \
  "[('FAIL', '/mnt/models:'), ('PASS', '/mnt/shared:')]" ] || fail "storage.path_live's findings in JSON"
# A bad plan beside a good one: named by its file; the good one is checked all the same.
MODELS=1 tree two
echo '{' > "$TMP/two/etc/sparkctl/storage.d/mnt-models.json"
expect 4 "$SPARKCTL" storage check --root "$TMP/two"
grep -Eq "FAIL +storage.conf +the plan cannot be used: /etc/sparkctl/storage.d/mnt-models.json:" "$TMP/out" || { cat "$TMP/out" >&2; fail "the bad plan"; }
grep -Eq "PASS +storage.mounted +/mnt/shared is mounted" "$TMP/out" || fail "the good plan beside a bad one"

# fault CHECK TEXT: the tree $TMP/f fails CHECK with TEXT and a fix, exit 4.
fault() {
  expect 4 "$SPARKCTL" storage check --root "$TMP/f"
  grep -E "FAIL +$1 " "$TMP/out" > "$TMP/line" || { cat "$TMP/out" >&2; fail "$1 did not fail"; }
  contains "$TMP/line" "$2"
  grep -A1 -E "FAIL +$1 " "$TMP/out" | grep -q "fix: " || fail "$1 failed without a fix"
}

# The path leaves by the management port (enP7s7, 192.168.1.51), not the planned fabric port.
tree f
sed -i 's/src_addr=192.168.177.11/src_addr=192.168.1.51/' "$TMP/f/sys/devices/virtual/nvme-fabrics/ctl/nvme1/address"
fault storage.path_iface "leaves from 192.168.1.51 on enP7s7, not on the planned enp1s0f1np1"

# The fstab line without nofail: a boot without the target stops in emergency mode.
tree f
sed -i 's/_netdev,nofail,/_netdev,/' "$TMP/f/etc/fstab"
fault storage.nofail "lacks nofail"
# The fix is the plan's own command: it writes the line again as planned.
contains "$TMP/out" "fix: sparkctl storage plan --target 192.168.177.1:4420 --nqn nqn.2026-01.org.example:shared --mount /mnt/shared --fs ext4 --uuid 0b3c6a52-8c0e-4b8a-9f5e-3d2f1a7c9e11"

# Not mounted.
tree f
sed -i '\|/mnt/shared|d' "$TMP/f/proc/self/mounts"
fault storage.mounted "nothing is mounted at /mnt/shared"
contains "$TMP/out" "fix: sudo mount /mnt/shared"

# The path is not live: connecting is a warning (exit 0), deleting a failure.
tree f
echo connecting > "$TMP/f/sys/devices/virtual/nvme-fabrics/ctl/nvme1/state"
expect 0 "$SPARKCTL" storage check --root "$TMP/f"
grep -Eq "WARN +storage.path_live .*is connecting" "$TMP/out" || fail "connecting is not a warning"
echo deleting > "$TMP/f/sys/devices/virtual/nvme-fabrics/ctl/nvme1/state"
fault storage.path_live "is deleting"
# No controller at all: connect is the fix.
rm "$TMP/f/sys/class/nvme/nvme1"
fault storage.path_live "the volume is not connected"
contains "$TMP/out" "fix: sparkctl storage connect --mount /mnt/shared"

# A bad plan.
tree f
echo '{"schema_version":1' > "$TMP/f/etc/sparkctl/storage.d/mnt-shared.json"
fault storage.conf "the plan cannot be used: /etc/sparkctl/storage.d/mnt-shared.json:"

# No plan: storage check fails storage.conf; doctor on the same tree says nothing of storage.
expect 4 "$SPARKCTL" storage check --root tests/fixtures/spark-1cable
contains "$TMP/out" "no plan in /etc/sparkctl/storage.d"
run "$SPARKCTL" doctor --root tests/fixtures/spark-1cable
lacks "$TMP/out" "storage."
# doctor with a volume runs the storage checks beside its others.
run "$SPARKCTL" doctor --root "$TMP/good"
contains "$TMP/out" "storage.mounted"
contains "$TMP/out" "fabric.twins"

# Two nodes from one image (one host NQN), both mounting read-write: the cluster checks.
tree a spark-01 rw nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555
tree b spark-02 rw nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555
"$SPARKCTL" topo --root "$TMP/a" --json > "$TMP/a.json"
"$SPARKCTL" topo --root "$TMP/b" --json > "$TMP/b.json"
expect 4 "$SPARKCTL" storage check --from "$TMP/a.json" --from "$TMP/b.json"
grep -Eq "FAIL +storage.hostnqn_unique .*the same host NQN" "$TMP/out" || fail "no hostnqn_unique failure"
grep -Eq "FAIL +storage.single_writer .*2 nodes mount the volume" "$TMP/out" || fail "no single_writer failure"

# Usage: storage check has no choice of checks.
expect 2 "$SPARKCTL" storage check --only fabric
contains "$TMP/err" "storage check"

# A capture of a node records what the storage probe reads (the listing of storage.d too):
# the same section, both volumes, from the copy.
MODELS=1 tree cap
"$SPARKCTL" capture --root "$TMP/cap" "$TMP/captured" > /dev/null
"$SPARKCTL" topo --root "$TMP/cap" --json > "$TMP/cap1.json"
"$SPARKCTL" topo --root "$TMP/captured" --json > "$TMP/cap2.json"
[ "$(json_get "$TMP/cap1.json" 'd["storage"]')" = "$(json_get "$TMP/cap2.json" 'd["storage"]')" ] ||
  fail "the capture lost part of the storage section"
[ -L "$TMP/captured/dev/disk/by-uuid/0b3c6a52-8c0e-4b8a-9f5e-3d2f1a7c9e11" ] || fail "the by-uuid link was not captured"
[ "$(json_get "$TMP/cap2.json" '[v["conf"]["mount"] for v in d["storage"]["volumes"]]')" = "['/mnt/models', '/mnt/shared']" ] ||
  fail "the capture lost a volume"
json_valid inventory "$TMP/cap2.json"

# The storage VM's capture (tests/fixtures/storage/root, Debian's 6.1 kernel and nvme-cli 2.3:
# connected over loopback, mounted, its fstab line) with a plan to match passes; bound to
# another address (the VM's dummy0 capture), the path is on another interface than planned.
vm=tests/fixtures/storage/root
if [ -d "$vm" ]; then
  cp -a "$vm" "$TMP/vm"
  mkdir -p "$TMP/vm/etc/sparkctl/storage.d"
  uuid=$(basename "$(ls "$vm/dev/disk/by-uuid/")")
  nqn=$(cat "$vm/sys/devices/virtual/nvme-fabrics/ctl/nvme0/subsysnqn")
  printf '{"schema_version":1,"target":{"address":"127.0.0.1","port":4420},"nqn":"%s","mount":"/mnt/shared","fs":"ext4","uuid":"%s","interface":null,"unit":"sparkctl-nvme-mnt-shared.service","node":"vm","nodes":[{"name":"vm","access":"rw"}]}\n' \
    "$nqn" "$uuid" > "$TMP/vm/etc/sparkctl/storage.d/mnt-shared.json"
  expect 0 "$SPARKCTL" storage check --root "$TMP/vm"
  for id in conf hostnqn path_live mounted nofail; do
    grep -Eq "PASS +storage\.$id " "$TMP/out" || { cat "$TMP/out" >&2; fail "storage.$id did not pass on the VM's capture"; }
  done
  contains "$TMP/out" "nvme0 to $nqn at 127.0.0.1:4420 is live"
  sed -i 's/"interface":null/"interface":"lo"/' "$TMP/vm/etc/sparkctl/storage.d/mnt-shared.json"
  cp tests/fixtures/storage/wrong-iface-sysfs-address-host-traddr.txt \
    "$TMP/vm/sys/devices/virtual/nvme-fabrics/ctl/nvme0/address"
  expect 4 "$SPARKCTL" storage check --root "$TMP/vm"
  grep -Eq "FAIL +storage.path_iface +/mnt/shared: nvme0 leaves from 198.18.0.2 on .*, not on the planned lo" "$TMP/out" ||
    { cat "$TMP/out" >&2; fail "the VM's path bound to 198.18.0.2 passed storage.path_iface"; }
else
  note "no tests/fixtures/storage/root (the storage VM's capture): not checked against it"
fi

# Live: storage.target_reachable is the one check that asks the network.  In a mount
# namespace whose /etc has a plan (an overlay), against a listener on loopback that
# counts connections: topo and storage check connect, env does not; a closed port fails.
if [ "$(id -u)" = 0 ] && unshare -m true 2> /dev/null; then
  cat > "$TMP/live.sh" <<'SH'
set -eu
mkdir -p "$TMP/up/sparkctl/storage.d" "$TMP/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$TMP/up,workdir=$TMP/work" /etc
cat > /etc/sparkctl/storage.d/mnt-shared.json <<J
{"schema_version":1,"target":{"address":"127.0.0.1","port":$1},"nqn":"nqn.2026-01.org.example:shared","mount":"/mnt/shared","fs":"ext4","uuid":"0b3c6a52-8c0e-4b8a-9f5e-3d2f1a7c9e11","interface":null,"unit":"sparkctl-nvme-mnt-shared.service","node":"n","nodes":[{"name":"n","access":"rw"}]}
J
# counted: how many connections the listener took before this: a connection
# of our own that says M is counted after every one made before it (the
# listener takes them in order), so when it is, the count is whole.
counted() {
  local want i
  want=$(($(tr -cd M < "$TMP/accepted" | wc -c) + 1))
  # No listener (the closed port below): nothing to count.
  { exec 3<> "/dev/tcp/127.0.0.1/$1"; } 2> /dev/null || { echo "no listener"; return 0; }
  printf M >&3 && exec 3>&-
  for i in $(seq 300); do
    [ "$(tr -cd M < "$TMP/accepted" | wc -c)" -ge "$want" ] && break
    sleep 0.1
  done
  tr -cd c < "$TMP/accepted" | wc -c
}
env -u SPARKCTL_ROOT "$SPARKCTL" env > /dev/null 2>&1 || true
echo "after env: $(counted "$1")"
env -u SPARKCTL_ROOT "$SPARKCTL" topo --json > "$TMP/live.json"
echo "after topo: $(counted "$1")"
env -u SPARKCTL_ROOT "$SPARKCTL" storage check --local > "$TMP/live-check" || true
SH
  python3 - "$TMP" <<'PY' > "$TMP/live.out" || fail "the live run failed"
import os, socket, subprocess, sys, threading
tmp = sys.argv[1]
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
log = os.path.join(tmp, "accepted")
# A letter per connection, in the order taken: M for the script's own
# marker (it sends M), c for any other.
def accept():
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        try:
            first = c.recv(1)
        except OSError:
            first = b""
        c.close()
        with open(log, "a") as f:
            f.write("M" if first == b"M" else "c")
open(log, "w").close()
threading.Thread(target=accept, daemon=True).start()
r = subprocess.run(["unshare", "-m", "bash", os.path.join(tmp, "live.sh"), str(s.getsockname()[1])],
                   env=dict(os.environ, TMP=tmp), capture_output=True, text=True)
print(r.stdout, r.stderr)
sys.exit(r.returncode)
PY
  contains "$TMP/live.out" "after env: 0"
  contains "$TMP/live.out" "after topo: 1"
  [ "$(json_get "$TMP/live.json" 'd["storage"]["volumes"][0]["target_reachable"]')" = True ] || fail "topo did not reach the target"
  grep -Eq "PASS +storage.target_reachable +/mnt/shared: 127.0.0.1:[0-9]+ accepts TCP connections" "$TMP/live-check" ||
    { cat "$TMP/live-check" >&2; fail "storage check did not reach the target"; }
  # A port nobody listens on: refused.
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' > "$TMP/closed"
  unshare -m env TMP="$TMP" bash "$TMP/live.sh" "$(cat "$TMP/closed")" > /dev/null 2>&1 || true
  grep -Eq "FAIL +storage.target_reachable .*Connection refused" "$TMP/live-check" ||
    { cat "$TMP/live-check" >&2; fail "a closed port did not fail storage.target_reachable"; }
else
  note "not root or no mount namespaces: the live target probe is not tested"
fi

# What cannot be read is an error (1), as in doctor.
expect 1 "$SPARKCTL" storage check --from "$TMP/no-such.json"
expect 1 "$SPARKCTL" storage check --root "$TMP/no-such-tree"
contains "$TMP/err" "storage check"
