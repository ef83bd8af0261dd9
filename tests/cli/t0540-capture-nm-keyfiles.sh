#!/usr/bin/env bash
# NetworkManager keyfiles: the inventory reads them below --root (no nmcli),
# a capture keeps them - but only the keys sparkctl reads, never a secret
# (a Wi-Fi key, a VPN password) - and the capture replays the same profiles.
. "$SRCDIR/tests/lib.sh"
# py FILE CODE ARGS...: Python CODE on the JSON document FILE as d, ARGS in args.
py() {
  local file=$1 code=$2
  shift 2
  /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
args = sys.argv[3:]
def want(got, exp, what):
    if got != exp:
        sys.exit("%s: got %r, expected %r" % (what, got, exp))
exec(sys.argv[2])
' "$file" "$code" "$@" || fail "check on $file failed"
}

root=$TMP/root
cp -a "$FIXTURES/spark-1cable" "$root"
d=$root/etc/NetworkManager/system-connections
mkdir -p "$d"
cat > "$d/fabric.nmconnection" << 'EOF2'
[connection]
id=Wired connection 2
uuid=0a6c0e55-0000-4000-8000-000000000002
type=ethernet
interface-name=enp1s0f1np1

[ipv4]
method=auto
EOF2
cat > "$d/home.nmconnection" << 'EOF2'
[connection]
id=home
type=wifi
autoconnect=false

[wifi-security]
key-mgmt=wpa-psk
psk=do-not-copy-me
EOF2
chmod 600 "$d"/*.nmconnection

expect 0 "$SPARKCTL" topo --root "$root" --json
py "$TMP/out" '
nm = d["system"]["network_manager"]
want([p["file"] for p in nm], ["fabric.nmconnection", "home.nmconnection"], "files")
want((nm[0]["interface_name"], nm[0]["autoconnect"], nm[0]["ipv4_method"]), ("enp1s0f1np1", True, "auto"), "fabric profile")
want((nm[1]["id"], nm[1]["autoconnect"]), ("home", False), "wifi profile")
'
cp "$TMP/out" "$TMP/live.json"
run "$SPARKCTL" doctor --root "$root" --only net.nm_autoconnect
contains "$TMP/out" "auto-connects fabric port enp1s0f1np1 with DHCP"

expect 0 "$SPARKCTL" capture --root "$root" "$TMP/cap"
c=$TMP/cap/etc/NetworkManager/system-connections
[ -f "$c/home.nmconnection" ] || fail "the capture has no keyfile"
! grep -rq "do-not-copy-me\|psk\|uuid" "$c" || fail "a capture kept a secret: $(grep -r psk "$c")"
expect 0 "$SPARKCTL" topo --root "$TMP/cap" --json
py "$TMP/out" '
import json
live = json.load(open(args[0]))["system"]["network_manager"]
want(d["system"]["network_manager"], live, "replayed profiles")
' "$TMP/live.json"
