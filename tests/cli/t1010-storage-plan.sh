#!/usr/bin/env bash
# storage plan: each node's files (golden), checked by systemd-analyze and findmnt;
# --write below a root (modes, merges, backups, a second run changes nothing, never
# outside the root); refusals exit 2 with one line and write nothing.
. "$SRCDIR/tests/lib.sh"

UUID=0b6e4a52-4f0c-4c4e-9d5e-1f2a3b4c5d6e
NQN=nqn.2026-01.org.example:shared
plan() { "$SPARKCTL" storage plan --nqn "$NQN" "$@"; }

# ---- printed: three nodes, the first the writer by default; IPv6 target with a port
expect 0 plan --target '[fd00::1]:4421' --mount /mnt/shared --uuid "$UUID" \
  --nodes 'spark[1-3]' --iface enp1s0f1np1
golden storage-plan-3nodes.txt "$TMP/out"
contains "$TMP/out" "# writer: spark1 (the first node; --writer NODE or --ro-all to choose)"
# xfs, --writer, an IPv4 target, no interface, a mount point systemd must escape
expect 0 plan --target 198.18.1.1 --mount '/srv/nvme-data' --fs xfs --uuid "$UUID" \
  --nodes a,b --writer b --json
golden storage-plan-xfs.json "$TMP/out"
cp "$TMP/out" "$TMP/xfs.json"
[ "$(json_get "$TMP/xfs.json" 'd["writer"], d["writer_default"]')" = "('b', False)" ] || fail "writer"
[ "$(json_get "$TMP/xfs.json" '[n["access"] for n in d["nodes"]]')" = "['ro', 'rw']" ] || fail "access"
# Without --uuid the plan is printed all the same, saying what stands for it.
expect 0 plan --target 198.18.1.1 --mount /mnt/shared --nodes a --ro-all
contains "$TMP/out" "# writer: none (--ro-all: every node mounts it read-only)"
contains "$TMP/out" "UUID=FILESYSTEM-UUID /mnt/shared ext4 _netdev,nofail,noatime,x-systemd.requires=sparkctl-nvme-mnt-shared.service,ro,noload 0 0"

# --node prints that node's files only.
expect 0 plan --target 198.18.1.1 --mount /mnt/shared --nodes a,b,c --node b --json
[ "$(json_get "$TMP/out" '[n["name"] for n in d["nodes"]], d["writer"]')" = "(['b'], 'a')" ] || fail "--node b"
# The nodes of the cluster file, without its users.
"$SPARKCTL" cluster add --cluster "$TMP/cluster.json" spark7 --user ops > /dev/null
"$SPARKCTL" cluster add --cluster "$TMP/cluster.json" spark8 > /dev/null
expect 0 plan --target 198.18.1.1 --mount /mnt/shared --cluster "$TMP/cluster.json" --json
[ "$(json_get "$TMP/out" '[(n["name"], n["access"]) for n in d["nodes"]]')" = "[('spark7', 'rw'), ('spark8', 'ro')]" ] \
  || fail "the cluster file's nodes"
expect 2 plan --target 198.18.1.1 --mount /mnt/shared --nodes a -H b
contains "$TMP/err" "--nodes and -H name the same nodes: give one"

# ---- the files, one node each, as the tools that read them see them
files() { # JSON-FILE NODE-INDEX DIR: each file of the node into DIR, by its base name
  mkdir -p "$3"
  /usr/bin/python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
for f in d["nodes"][int(sys.argv[2])]["files"]:
    open(os.path.join(sys.argv[3], os.path.basename(f["path"])), "w").write(f["content"])' "$1" "$2" "$3"
}
# A mount point that exists (findmnt checks it), with a space fstab must escape.
M="$TMP/mnt/my data"
mkdir -p "$M"
expect 0 plan --target '[fd00::1]' --mount "$M" --uuid "$UUID" --nodes w,r --iface eth0 --json
cp "$TMP/out" "$TMP/plan.json"
unit=$(json_get "$TMP/plan.json" 'd["nodes"][0]["storage"]["unit"]')
[ "$unit" = "sparkctl-nvme-$(systemd-escape --path "$M").service" ] || fail "unit $unit is not systemd-escape's name"
for i in 0 1; do
  files "$TMP/plan.json" $i "$TMP/node$i"
  # systemd's own check of the unit: syntax, and that ExecStart's programs exist.
  systemd-analyze verify --man=no "$TMP/node$i/$unit" > "$TMP/verify" 2>&1 || { cat "$TMP/verify" >&2; fail "systemd-analyze verify of node $i's unit"; }
  # The only thing findmnt may miss is the filesystem: no volume here has that UUID.
  findmnt --verify --verbose --tab-file "$TMP/node$i/fstab" > "$TMP/findmnt" 2>&1 || :
  contains "$TMP/findmnt" "0 parse errors"
  contains "$TMP/findmnt" "$M"
  [ "$(grep -c '\[E\]' "$TMP/findmnt")" = 1 ] || { cat "$TMP/findmnt" >&2; fail "findmnt finds more than the absent source"; }
  contains "$TMP/findmnt" "[E] unreachable on boot required source: UUID=$UUID"
  [ "$(findmnt --tab-file "$TMP/node$i/fstab" -n -o TARGET)" = "$M" ] || fail "fstab's mount point, unescaped"
done
# findmnt shows a backslash as \x5c.
options() { findmnt --tab-file "$1" -n -o OPTIONS | sed 's/\\x5c/\\/g'; }
[ "$(options "$TMP/node0/fstab")" = "_netdev,nofail,noatime,x-systemd.requires=$unit" ] || fail "writer's options"
[ "$(options "$TMP/node1/fstab")" = "_netdev,nofail,noatime,x-systemd.requires=$unit,ro,noload" ] || fail "reader's options"
contains "$TMP/node0/$unit" "ExecStart=/usr/sbin/nvme connect -t tcp -n $NQN -a fd00::1 -s 4420 -f eth0 -l 600 -c 10"
contains "$TMP/node0/discovery.conf" "--transport=tcp --traddr=fd00::1 --trsvcid=4420 --host-iface=eth0"
# The checks can fail: a program that does not exist, a line findmnt cannot parse.
sed 's|/usr/sbin/nvme connect|/usr/sbin/no-such-nvme connect|' "$TMP/node0/$unit" > "$TMP/broken.service"
! systemd-analyze verify --man=no "$TMP/broken.service" > /dev/null 2>&1 || fail "systemd-analyze verify passes anything"
# ExecCondition skips the connect of a volume connected already: run its command as
# systemd would ($$ is $), on a sysfs of the test's (sh and grep are the real ones).
cond=$(sed -n 's/^ExecCondition=//p' "$TMP/node0/$unit" | sed 's/\$\$/$/g' | sed "s|/sys/class/nvme/|$TMP/sysnvme/|")
[ -n "$cond" ] || fail "no ExecCondition in the unit"
mkdir -p "$TMP/sysnvme/nvme0" "$TMP/sysnvme/nvme1"
echo nqn.2026-01.org.example:other > "$TMP/sysnvme/nvme0/subsysnqn"
eval "$cond" || fail "ExecCondition skips the connect of a volume that is not connected"
echo "$NQN" > "$TMP/sysnvme/nvme1/subsysnqn"
! eval "$cond" || fail "ExecCondition lets nvme connect run for a volume connected already"
rm -r "$TMP/sysnvme"
eval "$cond" || fail "ExecCondition skips the connect where no NVMe controller exists"

# ---- --write below a root: this node by its host name
R=$TMP/root
mkdir -p "$R/etc/nvme" "$R/proc/sys/kernel"
echo spark2 > "$R/proc/sys/kernel/hostname"
printf '# the admin'"'"'s own\n--transport=tcp --traddr=198.18.9.9 --trsvcid=4420\n--transport=tcp --traddr=198.18.1.1 --trsvcid=4420 --host-iface=old0\n' > "$R/etc/nvme/discovery.conf"
printf 'UUID=1111 / ext4 errors=remount-ro 0 1\nUUID=2222 /mnt/shared ext4 defaults 0 2\n# keep me\n' > "$R/etc/fstab"
chmod 600 "$R/etc/fstab"
cp "$R/etc/fstab" "$TMP/fstab.orig"
cp "$R/etc/nvme/discovery.conf" "$TMP/discovery.orig"
W="--target 198.18.1.1 --mount /mnt/shared --uuid $UUID --nodes spark1,spark2 --root $R --write"
# shellcheck disable=SC2086
expect 0 plan $W
sed "s|$R|ROOT|g" "$TMP/out" > "$TMP/written"
golden storage-plan-write.txt "$TMP/written"
U=$R/etc/systemd/system/sparkctl-nvme-mnt-shared.service
for f in "$U" "$R/etc/modules-load.d/sparkctl-nvme-tcp.conf" "$R/etc/sparkctl/storage.d/mnt-shared.json" "$R/etc/nvme/discovery.conf"; do
  [ "$(stat -c %a "$f")" = 644 ] || fail "$f: mode $(stat -c %a "$f"), expected 644"
done
[ "$(stat -c %a "$R/etc/fstab")" = 600 ] || fail "fstab's mode not kept"
same "$TMP/fstab.orig" "$R/etc/fstab.sparkctl.bak"
same "$TMP/discovery.orig" "$R/etc/nvme/discovery.conf.bak"
printf 'UUID=1111 / ext4 errors=remount-ro 0 1\nUUID=%s /mnt/shared ext4 _netdev,nofail,noatime,x-systemd.requires=sparkctl-nvme-mnt-shared.service,ro,noload 0 0\n# keep me\n' "$UUID" > "$TMP/fstab.want"
same "$TMP/fstab.want" "$R/etc/fstab"
printf '# the admin'"'"'s own\n--transport=tcp --traddr=198.18.9.9 --trsvcid=4420\n--transport=tcp --traddr=198.18.1.1 --trsvcid=4420\n' > "$TMP/discovery.want"
same "$TMP/discovery.want" "$R/etc/nvme/discovery.conf"
[ "$(json_get "$R/etc/sparkctl/storage.d/mnt-shared.json" 'd["node"], d["nodes"][1]')" = "('spark2', {'name': 'spark2', 'access': 'ro'})" ] || fail "the plan in storage.d"
# What --write installs is what the plan prints for that node.
# shellcheck disable=SC2086
"$SPARKCTL" storage plan --nqn "$NQN" --target 198.18.1.1 --mount /mnt/shared --uuid "$UUID" --nodes spark1,spark2 --json > "$TMP/p.json"
files "$TMP/p.json" 1 "$TMP/printed"
same "$TMP/printed/sparkctl-nvme-mnt-shared.service" "$U"
same "$TMP/printed/mnt-shared.json" "$R/etc/sparkctl/storage.d/mnt-shared.json"

# A second identical --write changes nothing: no file, no backup.
(cd "$R" && find . -type f -printf '%p %s %T@\n' | sort) > "$TMP/before"
# shellcheck disable=SC2086
expect 0 plan $W --json
[ "$(json_get "$TMP/out" '[f["changed"] for f in d["files"]]')" = "[False, False, False, False, False]" ] || fail "a second write changed something"
(cd "$R" && find . -type f -printf '%p %s %T@\n' | sort) > "$TMP/after"
same "$TMP/before" "$TMP/after"
# A changed plan replaces the node's own files, keeping the previous ones as .bak.
# shellcheck disable=SC2086
expect 0 plan $W --writer spark2
contains "$R/etc/fstab" "x-systemd.requires=sparkctl-nvme-mnt-shared.service 0 0"
contains "$R/etc/fstab.sparkctl.bak" ",ro,noload 0 0"
contains "$R/etc/sparkctl/storage.d/mnt-shared.json.bak" '"access": "ro"'
[ "$(grep -c /mnt/shared "$R/etc/fstab")" = 1 ] || fail "two lines for the mount point"

# ---- two volumes on one node (as raid5-data and llm-models on the seed cluster): one plan
# each in storage.d, both fstab lines, both units; replanning one replaces only its files.
V=$TMP/volumes
mkdir -p "$V/proc/sys/kernel"
echo spark1 > "$V/proc/sys/kernel/hostname"
A="--target 198.18.1.1 --mount /mnt/rosa-storage --uuid $UUID --nodes spark1,spark2 --root $V --write"
B="--target 198.18.1.1 --mount /mnt/rosa-models --uuid 7f1e2d3c-4b5a-4697-8877-665544332211 --nodes spark1,spark2 --root $V --write"
# shellcheck disable=SC2086
expect 0 plan $A
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" storage plan --nqn nqn.2026-01.org.example:models $B
D=$V/etc/sparkctl/storage.d
[ "$(ls "$D")" = "$(printf 'mnt-rosa\\x2dmodels.json\nmnt-rosa\\x2dstorage.json')" ] || fail "storage.d holds $(ls "$D")"
[ "$(stat -c %a "$D/mnt-rosa\x2dmodels.json")" = 644 ] || fail "a plan's mode"
[ "$(json_get "$D/mnt-rosa\x2dstorage.json" 'd["mount"], d["nqn"]')" = "('/mnt/rosa-storage', '$NQN')" ] || fail "the first plan"
[ "$(json_get "$D/mnt-rosa\x2dmodels.json" 'd["mount"], d["nqn"]')" = "('/mnt/rosa-models', 'nqn.2026-01.org.example:models')" ] || fail "the second plan"
[ "$(grep -c ' /mnt/rosa-storage ext4 ' "$V/etc/fstab")" = 1 ] || fail "the first volume's fstab line"
[ "$(grep -c ' /mnt/rosa-models ext4 ' "$V/etc/fstab")" = 1 ] || fail "the second volume's fstab line"
[ -f "$V/etc/systemd/system/sparkctl-nvme-mnt-rosa\x2dstorage.service" ] || fail "the first unit"
[ -f "$V/etc/systemd/system/sparkctl-nvme-mnt-rosa\x2dmodels.service" ] || fail "the second unit"
# storage check (a tree of the node) sees both plans; one volume's load wants --mount.
expect 4 "$SPARKCTL" storage check --root "$V"
grep -Eq "PASS +storage.conf +/mnt/rosa-models: nqn.2026-01.org.example:models at" "$TMP/out" || fail "check: the second plan"
grep -Eq "PASS +storage.conf +/mnt/rosa-storage: $NQN at" "$TMP/out" || fail "check: the first plan"
# Replanning the first (spark2 the writer) replaces its plan only.
cp "$D/mnt-rosa\x2dmodels.json" "$TMP/models.before"
# shellcheck disable=SC2086
expect 0 plan $A --writer spark2 --json
[ "$(json_get "$TMP/out" '" ".join(f["path"].rsplit("/", 1)[1] for f in d["files"] if f["changed"])')" = \
  'mnt-rosa\x2dstorage.json fstab' ] ||
  fail "replanning one volume changed more: $(cat "$TMP/out")"
same "$TMP/models.before" "$D/mnt-rosa\x2dmodels.json"
[ "$(json_get "$D/mnt-rosa\x2dstorage.json" 'd["nodes"][0]["access"]')" = ro ] || fail "the replanned plan"
[ "$(ls "$D" | wc -l)" = 3 ] || fail "storage.d: $(ls "$D")"
[ "$(grep -c ' /mnt/rosa-models ext4 _netdev,nofail,noatime,x-systemd.requires=[^ ]* 0 0' "$V/etc/fstab")" = 1 ] || fail "the second fstab line changed"
# One subsystem, one mount point: the first volume's NQN at another mount point is refused.
# shellcheck disable=SC2086
expect 2 plan --target 198.18.1.1 --mount /mnt/elsewhere --uuid "$UUID" --nodes spark1,spark2 --root "$V" --write
contains "$TMP/err" "$NQN is already planned at /mnt/rosa-storage"
[ ! -e "$D/mnt-elsewhere.json" ] || fail "written on a refusal"

# ---- a root whose etc is a symbolic link out of it: written inside the root, never outside
R2=$TMP/root2
mkdir -p "$R2" "$TMP/outside"
ln -s "$TMP/outside" "$R2/etc"
# The link's target inside the root does not exist: refused, with nothing written anywhere.
expect 1 plan --target 198.18.1.1 --mount /mnt/shared --uuid "$UUID" --nodes n1 --node n1 --root "$R2" --write
contains "$TMP/err" "cannot open $R2/etc/modules-load.d: No such file or directory"
[ -z "$(ls -A "$TMP/outside")" ] || fail "written outside the root: $(ls -A "$TMP/outside")"
# Once it exists inside the root, the files go there.
mkdir -p "$R2$TMP/outside"
expect 0 plan --target 198.18.1.1 --mount /mnt/shared --uuid "$UUID" --nodes n1 --node n1 --root "$R2" --write
[ -z "$(ls -A "$TMP/outside")" ] || fail "written outside the root: $(ls -A "$TMP/outside")"
[ -f "$R2$TMP/outside/fstab" ] || fail "the link was not resolved inside the root"

# A host name with its domain is the node of its first label.
R3=$TMP/root3
mkdir -p "$R3/proc/sys/kernel"
echo spark2.lab.example > "$R3/proc/sys/kernel/hostname"
expect 0 plan --target 198.18.1.1 --mount /mnt/shared --uuid "$UUID" --nodes spark1,spark2 --root "$R3" --write
contains "$TMP/out" "node spark2 (read-only)"
contains "$R3/etc/fstab" ",ro,noload 0 0"

# A mount point that holds files, with nothing mounted there: the volume would hide
# them; refused (exit 1, nothing written) unless --force; mounted already, it is fine.
R4=$TMP/root4
mkdir -p "$R4/mnt/shared/weights" "$R4/proc/self"
touch "$R4/mnt/shared/train.jsonl"
m4="--target 198.18.1.1 --mount /mnt/shared --uuid $UUID --nodes n1 --node n1 --root $R4 --write"
# shellcheck disable=SC2086
expect 1 plan $m4
contains "$TMP/err" "/mnt/shared holds 2 entries (train.jsonl, ...) and nothing is mounted there: the volume would hide them"
[ ! -e "$R4/etc" ] || fail "written for a mount point that holds files: $(find "$R4/etc")"
echo "/dev/nvme1n1 /mnt/shared ext4 rw,relatime 0 0" > "$R4/proc/self/mounts"
# shellcheck disable=SC2086
expect 0 plan $m4
rm -r "$R4/etc" "$R4/proc/self/mounts"
# shellcheck disable=SC2086
expect 0 plan $m4 --force
[ -f "$R4/etc/fstab" ] || fail "--force wrote no fstab"
rm -r "$R4/etc"
mkdir -p "$R4/srv" && touch "$R4/srv/file"
expect 1 plan --target 198.18.1.1 --mount /srv/file --uuid "$UUID" --nodes n1 --node n1 --root "$R4" --write
contains "$TMP/err" "/srv/file is not a directory: it cannot be a mount point"

# ---- refusals: one line, exit 2, nothing written
E=$TMP/empty-root
mkdir -p "$E"
refused() { # WHAT ARGS...: exit 2, one line on stderr containing WHAT, nothing below $E
  local what=$1; shift
  expect 2 plan --root "$E" --write --node a "$@"
  [ "$(wc -l < "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "not one line: $*"; }
  contains "$TMP/err" "$what"
  [ ! -s "$TMP/out" ] || fail "output on a refusal: $*"
  [ -z "$(ls -A "$E")" ] || fail "written on a refusal: $*"
}
ok="--target 198.18.1.1 --mount /mnt/shared --uuid $UUID --nodes a,b"
# shellcheck disable=SC2086
refused "two writers ('a' and 'b'): ext4 and xfs are not cluster filesystems" $ok --writer a --writer b
# shellcheck disable=SC2086
refused "two writers ('a' and 'b')" $ok --writer a,b
# shellcheck disable=SC2086
refused "--writer 'c' is not one of the nodes" $ok --writer c
# shellcheck disable=SC2086
refused "--writer and --ro-all contradict each other" $ok --writer a --ro-all
refused "--nqn 'nqn bad' is not an NQN (1 to 223 printable bytes without spaces)" --target 198.18.1.1 --mount /m --uuid "$UUID" --nodes a --nqn 'nqn bad'
refused "--mount 'mnt/shared' is not an absolute path" --target 198.18.1.1 --mount mnt/shared --uuid "$UUID" --nodes a
refused "--mount '/mnt/../etc' is not an absolute path" --target 198.18.1.1 --mount /mnt/../etc --uuid "$UUID" --nodes a
refused "--uuid '0b6e4a52' is not a filesystem UUID" --target 198.18.1.1 --mount /m --uuid 0b6e4a52 --nodes a
refused "--write needs --uuid" --target 198.18.1.1 --mount /m --nodes a
refused "--target 'fd00::1:4420:' is not ADDR[:PORT]" --target 'fd00::1:4420:' --mount /m --uuid "$UUID" --nodes a
refused "--target '198.18.1.1:0' is not ADDR[:PORT]" --target 198.18.1.1:0 --mount /m --uuid "$UUID" --nodes a
refused "--iface 'eth0:1' is not an interface name" --target 198.18.1.1 --mount /m --uuid "$UUID" --nodes a --iface eth0:1
refused "--fs 'btrfs' is not ext4 or xfs" --target 198.18.1.1 --mount /m --uuid "$UUID" --nodes a --fs btrfs
# shellcheck disable=SC2086
refused "--node 'a' is not one of the nodes (x, y)" --target 198.18.1.1 --mount /m --uuid "$UUID" --nodes x,y
# This host's name is not a node: --write says so.
mkdir -p "$TMP/named/proc/sys/kernel"
echo spark9 > "$TMP/named/proc/sys/kernel/hostname"
expect 2 plan --target 198.18.1.1 --mount /m --uuid "$UUID" --nodes a,b --root "$TMP/named" --write
contains "$TMP/err" "this host, 'spark9' is not one of the nodes (a, b); give --node"
[ "$(ls -A "$TMP/named")" = proc ] || fail "written on a refusal"
