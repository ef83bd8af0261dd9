#!/usr/bin/env bash
# sparkctl slurm conf: the files from the fixtures' inventories (golden), the
# CPUs and memory of this host as Debian's slurmd -C counts them, the files
# --write leaves below a root, bad input, and the generated files read by a
# real slurmctld (in namespaces of its own) as scontrol then shows them.
. "$SRCDIR/tests/lib.sh"

# inv FIXTURE NAME [MGMT]: the fixture's inventory as node NAME (its management address MGMT).
inv() {
  "$SPARKCTL" topo --root "$FIXTURES/$1" --json |
    python3 -c 'import json, sys
d = json.load(sys.stdin)
d["system"]["hostname"] = sys.argv[1]
for n in d["netdevs"]:
    if n["default_route"] and len(sys.argv) > 2:
        n["ipv4"][0]["address"] = sys.argv[2]
json.dump(d, sys.stdout)' "$2" ${3:+"$3"} > "$TMP/$2.json"
}
inv spark-1cable spark-01
inv spark-1cable spark-02
inv spark-ring ring1
inv spark-ring ring2
inv spark-ring ring3
inv ib-server dgx-h100-07
inv spark-2cable spark-2c

# ---- the files, from saved inventories
expect 0 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --from "$TMP/spark-02.json"
golden slurm-conf-pair.txt "$TMP/out"
contains "$TMP/out" "NodeName=spark-[01-02] CPUs=20 Boards=1 SocketsPerBoard=1 CoresPerSocket=20 ThreadsPerCore=1 RealMemory=112795 Gres=gpu:gb10:1 Features=fabric_pair,rails_2"
contains "$TMP/out" "SlurmctldHost=spark-01(192.168.1.51)"
expect 0 "$SPARKCTL" slurm conf --from "$TMP/ring1.json" --from "$TMP/ring2.json" \
  --from "$TMP/ring3.json" --controller ring2 --partition gpu
golden slurm-conf-ring.txt "$TMP/out"
contains "$TMP/out" "SwitchName=fabric Nodes=ring[1-3]"
contains "$TMP/out" "SlurmctldHost=ring2(10.0.0.21)"
# Unlike nodes: a NodeName line each; a share or a size as the reserve.
expect 0 "$SPARKCTL" slurm conf --from "$TMP/dgx-h100-07.json" --from "$TMP/spark-01.json" \
  --from "$TMP/spark-2c.json" --mem-reserve 5%
golden slurm-conf-mixed.txt "$TMP/out"
contains "$TMP/out" "NodeName=dgx-h100-07 CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 RealMemory=1960682 Gres=gpu:h100:8 Features=fabric_switch,rails_8"
contains "$TMP/out" "NodeName=dgx-h100-07 Name=gpu Type=h100 File=/dev/nvidia7"
expect 0 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --mem-reserve 16G
contains "$TMP/out" "RealMemory=$((125327 - 16384)) "
expect 0 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --mem-reserve 512
contains "$TMP/out" "RealMemory=$((125327 - 512)) "

# ---- bad input
for bad in x 100% 5%% -1G 8Q ""; do
  expect 2 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --mem-reserve "$bad"
  contains "$TMP/err" "--mem-reserve: expected a size"
done
expect 2 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --controller spark-09
contains "$TMP/err" "--controller: 'spark-09' is not among the nodes (spark-01)"
expect 2 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --partition 'a b'
expect 2 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" -H spark-01
expect 1 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --from "$TMP/spark-01.json"
contains "$TMP/err" "two nodes are named spark-01 (nodes 1 and 2)"
expect 1 "$SPARKCTL" slurm conf --from "$TMP/nonexistent.json"
expect 1 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --mem-reserve 200G
contains "$TMP/err" "spark-01: a reserve of 204800 MiB leaves nothing of its 125327 MiB"
# An inventory of an older sparkctl, without the CPUs.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); del d["system"]["cpu"]; json.dump(d, open(sys.argv[2], "w"))' \
  "$TMP/spark-02.json" "$TMP/old.json"
expect 1 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --from "$TMP/old.json"
contains "$TMP/err" "spark-02: the inventory has no CPU topology"
# A node that cannot be reached is named, exit 3.
cat > "$TMP/ssh" << 'EOF2'
#!/bin/sh
case "$1" in -G | -O*) exit 1 ;; esac
echo "ssh: connect to host node9 port 22: Connection refused" >&2
exit 255
EOF2
chmod +x "$TMP/ssh"
export SPARKCTL_SSH=$TMP/ssh
expect 3 "$SPARKCTL" slurm conf -H localhost,sparkctl-standin-node.invalid
unset SPARKCTL_SSH
contains "$TMP/err" "sparkctl-standin-node.invalid: ssh: connect to host node9 port 22: Connection refused"
[ ! -s "$TMP/out" ] || fail "slurm conf printed files without every node"

# ---- this host: the CPUs and memory slurmd -C counts
command -v slurmd > /dev/null || fail "no slurmd (scripts/setup installs it)"
expect 0 "$SPARKCTL" slurm conf -H localhost --mem-reserve 0
mine=$(grep '^NodeName=' "$TMP/out")
theirs=$(slurmd -C | head -1)
note "sparkctl: $mine"
note "slurmd -C: $theirs"
for key in NodeName CPUs Boards SocketsPerBoard CoresPerSocket ThreadsPerCore RealMemory; do
  a=$(tr ' ' '\n' <<< "$mine" | grep "^$key=")
  b=$(tr ' ' '\n' <<< "$theirs" | grep "^$key=")
  [ -n "$a" ] && [ "$a" = "$b" ] || fail "$key: sparkctl says '$a', slurmd -C '$b'"
done

# ---- --write below a root: the three files, 0644, the replaced ones kept
root=$TMP/root
mkdir -p "$root"
expect 0 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --from "$TMP/spark-02.json" --write --root "$root"
contains "$TMP/err" "wrote $root/etc/slurm/slurm-sparkctl.conf"
contains "$TMP/err" "Include /etc/slurm/slurm-sparkctl.conf"
[ ! -s "$TMP/out" ] || fail "--write printed the files"
"$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --from "$TMP/spark-02.json" > "$TMP/printed"
for f in slurm-sparkctl.conf gres.conf topology.conf; do
  [ "$(stat -c %a "$root/etc/slurm/$f")" = 644 ] || fail "$f is not mode 0644"
  python3 - "$TMP/printed" "$root/etc/slurm/$f" "$f" << 'PY' || fail "$f is not what is printed"
import sys
text = open(sys.argv[1]).read()
part = text.split("# ==== /etc/slurm/%s ====\n" % sys.argv[3])[1].split("\n# ==== ")[0]
assert open(sys.argv[2]).read() == part, part
PY
done
echo "NodeName=old" > "$root/etc/slurm/gres.conf"
expect 0 "$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --write --root "$root" -q
[ ! -s "$TMP/err" ] || fail "-q: --write said more than errors"
contains "$root/etc/slurm/gres.conf.bak" "NodeName=old"
contains "$root/etc/slurm/slurm-sparkctl.conf.bak" "NodeName=spark-[01-02]"
contains "$root/etc/slurm/slurm-sparkctl.conf" "NodeName=spark-01 "

# ---- a real slurmctld reads the files: in namespaces of its own
# (tests/slurm/slurm.sh; its name is the controller's, its address
# 198.18.0.1, the nodes' names in its /etc/hosts)
require_root
command -v slurmctld > /dev/null && command -v scontrol > /dev/null || fail "no slurmctld or scontrol"
inv spark-1cable spark-01 198.18.0.1
. "$SRCDIR/tests/slurm/slurm.sh"
conf=$SLURM_DIR
mkdir -p "$conf/root"
"$SPARKCTL" slurm conf --from "$TMP/spark-01.json" --from "$TMP/spark-02.json" \
  --from "$TMP/dgx-h100-07.json" --write --root "$conf/root" -q
slurm_conf "Include $conf/root/etc/slurm/slurm-sparkctl.conf"
# topology.conf and gres.conf are read from slurm.conf's directory.
cp "$conf/root/etc/slurm/topology.conf" "$conf/root/etc/slurm/gres.conf" "$conf/"
printf '127.0.0.1 localhost\n198.18.0.1 spark-01\n198.18.0.2 spark-02\n198.18.0.3 dgx-h100-07\n' > "$conf/hosts"
slurm_ns spark-01 198.18.0.1
slurm_in mount --bind "$conf/hosts" /etc/hosts
slurm_ctld_start
slurm_in scontrol show node > "$conf/nodes"
slurm_in scontrol show topology > "$conf/topology"
slurm_in scontrol show partition > "$conf/partition"
slurm_ctld_stop
python3 - "$conf/nodes" << 'PY' || { cat "$conf/nodes" >&2; fail "scontrol shows other nodes than the files say"; }
import re, sys
nodes = {}
for block in open(sys.argv[1]).read().split("\n\n"):
    m = re.search(r"NodeName=(\S+)", block)
    if m:
        nodes[m.group(1)] = dict(re.findall(r"(\w+)=(\S+)", block))
assert sorted(nodes) == ["dgx-h100-07", "spark-01", "spark-02"], sorted(nodes)
s = nodes["spark-02"]
assert (s["CPUTot"], s["Boards"], s["Sockets"], s["CoresPerSocket"],
        s["ThreadsPerCore"], s["RealMemory"]) == ("20", "1", "1", "20", "1", "112795"), s
assert s["Gres"] == "gpu:gb10:1", s["Gres"]
assert s["AvailableFeatures"] == "fabric_switch,rails_2", s["AvailableFeatures"]
d = nodes["dgx-h100-07"]
assert (d["CPUTot"], d["Sockets"], d["CoresPerSocket"], d["ThreadsPerCore"]) == \
    ("224", "2", "56", "2"), d
assert d["Gres"] == "gpu:h100:8", d["Gres"]
PY
contains "$conf/topology" "SwitchName=fabric"
contains "$conf/topology" "Nodes=dgx-h100-07,spark-[01-02]"
contains "$conf/partition" "PartitionName=sparks"
