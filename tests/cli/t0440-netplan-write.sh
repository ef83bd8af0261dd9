#!/usr/bin/env bash
# netplan --write: atomic, mode 0600, backups, never over a foreign file; refusals touch nothing.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
R=$TMP/root
cp -a tests/fixtures/spark-1cable "$R"
mkdir -p "$R/etc/netplan"
target=$R/etc/netplan/90-sparkctl.yaml
args="--root $R --plan pair --node 0"

# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write
[ -f "$target" ] || fail "nothing written"
[ "$(stat -c %a "$target")" = 600 ] || fail "mode $(stat -c %a "$target"), expected 600"
head -1 "$target" | grep -q "^# Written by sparkctl netplan" || fail "no marker line"
# shellcheck disable=SC2086
"$SPARKCTL" netplan $args > "$TMP/printed"
same "$TMP/printed" "$target"
[ ! -e "$target.bak" ] || fail "a backup of nothing"
ls -A "$R/etc/netplan" | grep -v '^90-sparkctl.yaml$' && fail "stray files in etc/netplan"

# Writing again keeps the previous file as the backup.
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan --root "$R" --plan pair --node 1 --write
same "$TMP/printed" "$target.bak"
[ "$(stat -c %a "$target.bak")" = 600 ] || fail "backup mode"
grep -q "192.168.176.12/24" "$target" || fail "second write not in place"

# A file sparkctl did not write is refused, untouched; --force replaces it, keeping it.
printf 'network:\n  version: 2\n' > "$target"
cp "$target" "$TMP/foreign"
# shellcheck disable=SC2086
expect 1 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "exists and was not written by sparkctl; use --force"
same "$TMP/foreign" "$target"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write --force
same "$TMP/foreign" "$target.bak"
same "$TMP/printed" "$target"

# Whatever a write meets on its way, the file in place and its backup stay as
# they were when it fails: a directory where the file goes is refused, and
# even with --force the backup is not touched.
expect 0 "$SPARKCTL" netplan $args --write --force
cp "$target" "$TMP/current"
cp "$target.bak" "$TMP/backup"
mv "$target" "$TMP/file-aside"
mkdir "$target"
printf 'x\n' > "$target/inside"
expect 1 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "exists and was not written by sparkctl"
expect 1 "$SPARKCTL" netplan $args --write --force
same "$TMP/backup" "$target.bak"
[ "$(cat "$target/inside")" = x ] || fail "the directory in the way was changed"
rm -r "$target"
mv "$TMP/file-aside" "$target"
[ "$(ls -A "$R/etc/netplan" | tr '\n' ' ')" = "90-sparkctl.yaml 90-sparkctl.yaml.bak " ] \
  || fail "a failed write left files: $(ls -A "$R/etc/netplan")"

# A symlink out of the root is followed inside the root, never out of it:
# etc/netplan -> $TMP/outside (absolute or ../..) is $R$TMP/outside.
outside=$TMP/outside
mkdir "$outside"
printf 'network:\n  version: 2\n' > "$outside/90-sparkctl.yaml"
cp "$outside/90-sparkctl.yaml" "$TMP/outside-before"
mv "$R/etc/netplan" "$R/etc/netplan.real"
up=$(printf '../%.0s' $(seq 1 40))
for link in "$outside" "$up${outside#/}"; do
  ln -s "$link" "$R/etc/netplan"
  # shellcheck disable=SC2086
  expect 1 "$SPARKCTL" netplan $args --write --force
  contains "$TMP/err" "is netplan installed?"
  mkdir -p "$R$outside"
  # shellcheck disable=SC2086
  expect 0 "$SPARKCTL" netplan $args --write --force
  same "$TMP/printed" "$R$outside/90-sparkctl.yaml"
  same "$TMP/outside-before" "$outside/90-sparkctl.yaml"
  [ "$(ls -A "$outside")" = 90-sparkctl.yaml ] || fail "files written outside the root: $(ls -A "$outside")"
  rm -r "${R:?}/${TMP#/}" "$R/etc/netplan"
done
mv "$R/etc/netplan.real" "$R/etc/netplan"

# The file itself a symlink out of the root: not sparkctl's, and --force
# replaces the link, not what it points to.
mv "$target" "$TMP/file-aside"
ln -s "$outside/90-sparkctl.yaml" "$target"
# shellcheck disable=SC2086
expect 1 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "exists and was not written by sparkctl"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write --force
[ -f "$target" ] && [ ! -L "$target" ] || fail "the link was not replaced by a file"
same "$TMP/printed" "$target"
same "$TMP/outside-before" "$outside/90-sparkctl.yaml"
[ "$(readlink "$target.bak")" = "$outside/90-sparkctl.yaml" ] || fail "the link is not the backup"
rm "$TMP/file-aside"

# $SPARKCTL_ROOT is the root read and written, like --root; with no file to
# replace, the backup there is kept.
mv "$target" "$TMP/file-aside"
cp "$target.bak" "$TMP/backup"
SPARKCTL_ROOT=$R expect 0 "$SPARKCTL" netplan --plan pair --node 0 --write
same "$TMP/printed" "$target"
same "$TMP/backup" "$target.bak"
SPARKCTL_ROOT=$R expect 2 "$SPARKCTL" netplan --plan pair --node 0 --apply
contains "$TMP/err" "cannot be combined with --root or \$SPARKCTL_ROOT"
rm "$TMP/file-aside"

# netplan merges /etc/netplan/*.yaml in name order, the later file winning.
# An earlier file that configures a fabric interface is overridden (said in
# a note, with the lists netplan still adds); a later one would override the
# plan: refused, naming it, unless --force.
printf 'network:\n  version: 2\n  ethernets:\n    enp1s0f1np1:\n      dhcp4: true\n' > "$R/etc/netplan/50-cloud-init.yaml"
printf 'network:\n  ethernets:\n    enp1s0f1np1:\n      addresses: [10.9.9.9/24]\n      routes:\n        - to: 10.8.0.0/16\n          via: 10.9.9.1\n' \
  > "$R/etc/netplan/10-lab.yaml"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "note: /etc/netplan/50-cloud-init.yaml also configures enp1s0f1np1; 90-sparkctl.yaml comes later and its values win"
contains "$TMP/err" "note: /etc/netplan/10-lab.yaml also configures enp1s0f1np1; 90-sparkctl.yaml comes later and its values win, but netplan still adds its addresses, routes (remove them there)"
rm "$R/etc/netplan/10-lab.yaml"
# What netplan itself makes of them: the plan wins over 50-cloud-init (no
# DHCP, its address); under the old name 40-sparkctl.yaml it lost.
# render NAME: netplan generate on 50-cloud-init.yaml and the plan as NAME;
# prints the enp1s0f1np1 .network file netplan wrote.
render() {
  rm -rf "$TMP/np"
  mkdir -p "$TMP/np/etc/netplan"
  install -m 600 "$R/etc/netplan/50-cloud-init.yaml" "$TMP/np/etc/netplan/"
  install -m 600 "$target" "$TMP/np/etc/netplan/$1"
  netplan generate --root-dir "$TMP/np" 2> "$TMP/np.err" || { cat "$TMP/np.err" >&2; fail "netplan generate failed"; }
  cat "$TMP/np/run/systemd/network/10-netplan-enp1s0f1np1.network"
}
if command -v netplan > /dev/null 2>&1; then
  render 90-sparkctl.yaml > "$TMP/net"
  grep -qx "Address=192.168.176.11/24" "$TMP/net" || { cat "$TMP/net" >&2; fail "the plan's address not rendered"; }
  ! grep -q "^DHCP=" "$TMP/net" || { cat "$TMP/net" >&2; fail "50-cloud-init's DHCP won over 90-sparkctl.yaml"; }
  render 40-sparkctl.yaml > "$TMP/net"
  grep -qx "DHCP=ipv4" "$TMP/net" || { cat "$TMP/net" >&2; fail "under 40-sparkctl.yaml, 50-cloud-init's DHCP should win"; }
elif [ "${SPARKCTL_REQUIRE_NETPLAN:-}" = 1 ]; then
  fail "netplan is not installed"
fi
snapshot_np() { (cd "$R/etc/netplan" && find . -printf '%p %m %s\n' | sort && find . -type f -exec cat {} +) > "$1"; }
printf 'network:\n  ethernets:\n    enP2p1s0f1np1:\n      dhcp4: true # late\n' > "$R/etc/netplan/99-late.yaml"
printf 'network:\n  ethernets:\n    fabric:\n      match:\n        name: "enp1s0f*"\n      mtu: 1500\n' > "$R/run-netplan.yaml"
mkdir -p "$R/run/netplan"
mv "$R/run-netplan.yaml" "$R/run/netplan/95-match.yaml"
snapshot_np "$TMP/np-before"
# shellcheck disable=SC2086
expect 1 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "/etc/netplan/99-late.yaml configures enP2p1s0f1np1 and comes after 90-sparkctl.yaml in netplan's order, so its values win over the plan's; remove enP2p1s0f1np1 from it, or use --force to write anyway"
contains "$TMP/err" "/run/netplan/95-match.yaml configures enp1s0f1np1 (through a 'match: name:' pattern) and comes after 90-sparkctl.yaml"
snapshot_np "$TMP/np-after"
same "$TMP/np-before" "$TMP/np-after"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write --force
contains "$TMP/err" "warning: /etc/netplan/99-late.yaml configures enP2p1s0f1np1"
# A file of the same name in /run hides the one in /etc: netplan reads only that.
printf 'network:\n  version: 2\n' > "$R/run/netplan/99-late.yaml"
rm "$R/run/netplan/95-match.yaml"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write
lacks "$TMP/err" "99-late"
rm -r "$R/run/netplan" "$R/etc/netplan/99-late.yaml" "$R/etc/netplan/50-cloud-init.yaml"

# sparkctl's file of before, 40-sparkctl.yaml (cloud-init's 50- overrode it),
# is moved to its backup name once the new file is written; a file of that
# name that sparkctl did not write is left alone.
# shellcheck disable=SC2086
"$SPARKCTL" netplan --root "$R" --plan pair --node 1 > "$R/etc/netplan/40-sparkctl.yaml"
cp "$R/etc/netplan/40-sparkctl.yaml" "$TMP/old-file"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "moved the older $R/etc/netplan/40-sparkctl.yaml to 40-sparkctl.yaml.bak"
[ ! -e "$R/etc/netplan/40-sparkctl.yaml" ] || fail "the older file stayed"
same "$TMP/old-file" "$R/etc/netplan/40-sparkctl.yaml.bak"
same "$TMP/printed" "$target"
printf 'network:\n  version: 2\n' > "$R/etc/netplan/40-sparkctl.yaml"
# shellcheck disable=SC2086
expect 0 "$SPARKCTL" netplan $args --write
[ "$(cat "$R/etc/netplan/40-sparkctl.yaml")" = "$(printf 'network:\n  version: 2')" ] \
  || fail "a foreign 40-sparkctl.yaml was moved"
rm "$R/etc/netplan/40-sparkctl.yaml" "$R/etc/netplan/40-sparkctl.yaml.bak"

# Unwritable target: one line, non-zero, nothing touched.
snapshot() { (cd "$R/etc" && find . -printf '%p %m %s %T@\n' | sort && find . -type f -exec cat {} +) > "$1"; }
snapshot "$TMP/before"
chmod 555 "$R/etc/netplan"
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
  run setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search \
    "$SPARKCTL" netplan $args --write
else
  run "$SPARKCTL" netplan $args --write
fi
chmod 755 "$R/etc/netplan"
[ "$status" = 1 ] || fail "unwritable directory: exit $status"
contains "$TMP/err" "cannot create a file next to '90-sparkctl.yaml'"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after"

rm -rf "$R/etc/netplan"
# shellcheck disable=SC2086
expect 1 "$SPARKCTL" netplan $args --write
contains "$TMP/err" "is netplan installed?"
mkdir -p "$R/etc/netplan"

# Bad input: one clear line, exit 2 (usage) or 1, no file touched.
snapshot "$TMP/before"
expect 2 "$SPARKCTL" netplan --root "$R" --plan mesh --node 0
contains "$TMP/err" "unknown plan 'mesh'"
expect 2 "$SPARKCTL" netplan --root "$R" --plan pair --node 2 --write
contains "$TMP/err" "--node 2 is out of range: nodes are numbered 0 to 1"
expect 2 "$SPARKCTL" netplan --root "$R" --plan pair
contains "$TMP/err" "--node is required"
expect 2 "$SPARKCTL" netplan --root "$R" --plan switch --node 0
contains "$TMP/err" "--nodes is required for the switch plan"
expect 1 "$SPARKCTL" netplan --root "$R" --plan pair --node 0 --base 192.168.0.0/16 --write
contains "$TMP/err" "overlaps 192.168.1.51/24 of enP7s7, which is not a fabric interface"
expect 1 "$SPARKCTL" netplan --root "$R" --plan ring --node 0 --base 10.1.0.0/23 --write
contains "$TMP/err" "the ring plan needs both ports"
expect 1 "$SPARKCTL" netplan --root tests/fixtures/spark-ring --plan ring --node 0 --base 10.1.0.0/23
contains "$TMP/err" "--base 10.1.0.0/23 is too small: the ring plan needs 6 /24 subnets (a /21)"
expect 2 "$SPARKCTL" netplan --root "$R" --plan pair --node 0 --base 10.1.0.0
contains "$TMP/err" "is not an IPv4 CIDR"
expect 1 "$SPARKCTL" netplan --root "$R" --plan pair --node 0 --base 127.0.0.0/8
contains "$TMP/err" "not a unicast range"
expect 3 "$SPARKCTL" netplan --root tests/fixtures/ib-server --plan switch --node 0 --nodes 4
contains "$TMP/err" "its fabric is InfiniBand"
expect 2 "$SPARKCTL" netplan --from x.json --plan pair --node 0 --write
contains "$TMP/err" "cannot use --from"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after"

# --apply refuses to cut off the SSH session that runs it (checked before anything is written).
SSH_CONNECTION="198.18.0.9 50000 192.168.177.11 22" run "$SPARKCTL" netplan $args --apply
[ "$status" = 1 ] || fail "apply over the fabric: exit $status"
contains "$TMP/err" "refusing --apply: this SSH session arrives over enp1s0f1np1, which the plan changes"
SSH_CONNECTION="198.18.0.9 50000 192.168.1.51 22" run "$SPARKCTL" netplan $args --apply
contains "$TMP/err" "--apply changes this running host; it cannot be combined with --root"
snapshot "$TMP/after"
same "$TMP/before" "$TMP/after"
