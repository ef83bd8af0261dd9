#!/usr/bin/env bash
# netplan --apply on a "live" Spark: a private mount namespace shows a captured
# DGX Spark's /sys to the probe, /etc/netplan and /run are private tmpfs, and a
# stand-in 'netplan' on PATH runs the real 'netplan generate' and records 'apply'.
. "$SRCDIR/tests/lib.sh"
require_root
command -v unshare > /dev/null || skip "no unshare"
if ! command -v netplan > /dev/null 2>&1; then
  [ "${SPARKCTL_REQUIRE_NETPLAN:-}" = 1 ] && fail "netplan is not installed"
  skip "netplan is not installed"
fi
real_netplan=$(command -v netplan)

mkdir -p "$TMP/bin"
cat > "$TMP/bin/netplan" <<EOS
#!/bin/sh
echo "netplan \$*" >> "$TMP/calls"
case "\$1" in
generate) exec "$real_netplan" generate ;;
apply) exit \${FAKE_APPLY_STATUS:-0} ;;
esac
exit 3
EOS
chmod +x "$TMP/bin/netplan"

cat > "$TMP/inner.sh" <<'EOS'
set -eu
mount --make-rprivate /
hostname spark-01
mount --bind "$FIXTURE/sys" /sys
mount -t tmpfs tmpfs /etc/netplan 2>/dev/null || { mkdir -p /etc/netplan && mount -t tmpfs tmpfs /etc/netplan; }
mount -t tmpfs tmpfs /run
set +e
PATH="$TMP/bin:$PATH" "$SPARKCTL" netplan --plan pair --node 0 --apply > "$TMP/out" 2> "$TMP/err"
echo $? > "$TMP/status"
cp "$TMP/calls" "$TMP/calls1"
cp /etc/netplan/90-sparkctl.yaml "$TMP/written" 2>/dev/null
stat -c %a /etc/netplan/90-sparkctl.yaml > "$TMP/mode" 2>/dev/null
ls /run/systemd/network > "$TMP/rendered" 2>/dev/null
cat /run/systemd/network/*enp1s0f1np1*.network > "$TMP/network" 2>/dev/null
# Over the fabric: refused before anything is written.
rm -f /etc/netplan/90-sparkctl.yaml
SSH_CONNECTION="198.18.0.9 50000 192.168.177.11 22" PATH="$TMP/bin:$PATH" \
  "$SPARKCTL" netplan --plan pair --node 0 --apply > /dev/null 2> "$TMP/err2"
echo $? > "$TMP/status2"
ls -A /etc/netplan > "$TMP/after2"
FAKE_APPLY_STATUS=1 PATH="$TMP/bin:$PATH" "$SPARKCTL" netplan --plan pair --node 0 --apply \
  > /dev/null 2> "$TMP/err3"
echo $? > "$TMP/status3"
EOS

# The live probe reads addresses over netlink, by interface index: give it a
# namespace whose enp1s0f1np1 has the fixture's ifindex and address.
ns=sparkctl-$$-apply
ip netns add "$ns"
at_exit "ip netns del $ns"
ip -n "$ns" link add name enp1s0f1np1 index 4 type veth peer name sparkctl-peer
ip -n "$ns" addr add 192.168.177.11/24 dev enp1s0f1np1
ip -n "$ns" link set enp1s0f1np1 up

FIXTURE=$FIXTURES/spark-1cable TMP=$TMP SPARKCTL=$SPARKCTL \
  ip netns exec "$ns" unshare -m -u sh "$TMP/inner.sh"

[ "$(cat "$TMP/status")" = 0 ] || { cat "$TMP/err" >&2; fail "--apply exited $(cat "$TMP/status")"; }
same "$TMP/calls1" <(printf 'netplan generate\nnetplan apply\n')
[ "$(cat "$TMP/mode")" = 600 ] || fail "written with mode $(cat "$TMP/mode")"
"$SPARKCTL" netplan --root "$FIXTURES/spark-1cable" --plan pair --node 0 > "$TMP/expected"
same "$TMP/expected" "$TMP/written"
contains "$TMP/rendered" "10-netplan-enp1s0f1np1.network"
contains "$TMP/network" "Address=192.168.176.11/24"

[ "$(cat "$TMP/status2")" = 1 ] || fail "apply over the SSH interface exited $(cat "$TMP/status2")"
contains "$TMP/err2" "refusing --apply: this SSH session arrives over enp1s0f1np1"
[ ! -s "$TMP/after2" ] || fail "a refused --apply wrote $(cat "$TMP/after2")"

[ "$(cat "$TMP/status3")" = 1 ] || fail "a failing 'netplan apply' exited $(cat "$TMP/status3")"
contains "$TMP/err3" "'netplan apply' failed (status 1)"
