#!/usr/bin/env bash
# Two namespaces joined by a veth pair: the live probe in one of them sees its
# end exactly as the kernel does (MTU, carrier, addresses, default route),
# never the other's; a capture taken there replays the same netdevs outside,
# also from the real 'ip -j address show'; a link going down is reported, not
# fatal.
. "$SRCDIR/tests/lib.sh"
require_root
. "$SRCDIR/tests/netns/netns.sh"

new_ns A a
new_ns B b
# Both ends are created in A (nothing appears in this host's namespace).
ip -n "$A" link add sp0a mtu 9000 type veth peer name sp0b mtu 9000 \
  || fail "cannot create a veth pair"
ip -n "$A" link set sp0b netns "$B"
ip -n "$A" address add 198.18.0.1/24 dev sp0a
ip -n "$A" address add 198.19.7.1/16 dev sp0a
ip -n "$B" address add 198.18.0.2/24 dev sp0b
ip -n "$A" link set sp0a up
ip -n "$B" link set sp0b up
wait_until 10 "sp0a to be up" link_ready "$A" sp0a
wait_until 10 "sp0b to be up" link_ready "$B" sp0b
wait_until 10 "the IPv6 link-local address of sp0a" has_link_local "$A" sp0a
ip link show sp0a > /dev/null 2>&1 && fail "sp0a leaked into this host's namespace"

# facts NS DEV FILE: what the kernel says of DEV in NS, as JSON in FILE.
facts() {
  ip netns exec "$1" "$PYTHON" - "$2" > "$3" <<'PY'
import json, os, sys
dev = sys.argv[1]
base = "/sys/class/net/" + dev
def attr(a):
    try:
        return open(base + "/" + a).read().strip()
    except OSError:
        return None
drv = None
if os.path.islink(base + "/device/driver"):
    drv = os.path.basename(os.readlink(base + "/device/driver"))
print(json.dumps({"names": sorted(os.listdir("/sys/class/net")), "mtu": attr("mtu"),
                  "ifindex": attr("ifindex"), "address": attr("address"),
                  "operstate": attr("operstate"), "carrier": attr("carrier"),
                  "speed": attr("speed"), "driver": drv}))
PY
  ip -n "$1" -j address show dev "$2" > "$3.addr"
  ip -n "$1" route show default > "$3.route"
}

# check_dev INVENTORY FACTS DEV: the inventory's DEV agrees with the kernel.
check_dev() {
  py "$1" '
f = json.load(open(args[0]))
dev = args[1]
want([n["name"] for n in d["netdevs"]], f["names"], "netdev names")
n = nd(dev)
want(n["mtu"], int(f["mtu"]), "mtu")
want(n["ifindex"], int(f["ifindex"]), "ifindex")
want(n["address"], f["address"], "address")
want(n["operstate"], f["operstate"], "operstate")
want(n["carrier"], {"1": True, "0": False}.get(f["carrier"]), "carrier")
sp = f["speed"]
want(n["speed_gbps"], int(sp) / 1000 if sp not in (None, "-1") else None, "speed_gbps")
want(n["driver"], f["driver"], "driver")
want(n["pci_address"], None, "pci_address")
addr = json.load(open(args[0] + ".addr"))
ai = addr[0]["addr_info"] if addr else []
for fam, key in (("inet", "ipv4"), ("inet6", "ipv6")):
    want(n[key], [{"address": a["local"], "prefix_len": a["prefixlen"]}
                  for a in ai if a["family"] == fam], key)
want(n["default_route"], "dev " + dev in open(args[0] + ".route").read(), "default_route")
' "$2" "$3"
}

# ---- the live probe in A ----------------------------------------------------
ns_json "$A" "$TMP/a1.json"
facts "$A" sp0a "$TMP/f1.json"
check_dev "$TMP/a1.json" "$TMP/f1.json" sp0a
py "$TMP/a1.json" '
want([n["name"] for n in d["netdevs"]], ["lo", "sp0a"], "netdevs in A")
n = nd("sp0a")
want(n["mtu"], 9000, "mtu")
want(n["carrier"], True, "carrier")
want(n["operstate"], "up", "operstate")
want(n["ipv4"], [{"address": "198.18.0.1", "prefix_len": 24},
                 {"address": "198.19.7.1", "prefix_len": 16}], "ipv4")
if len(n["ipv6"]) != 1 or not n["ipv6"][0]["address"].startswith("fe80::") \
        or n["ipv6"][0]["prefix_len"] != 64:
    sys.exit("ipv6 of sp0a: %r" % n["ipv6"])
want(n["default_route"], False, "default_route before the route is added")
lo = nd("lo")
want(lo["ipv4"], [{"address": "127.0.0.1", "prefix_len": 8}], "lo ipv4")
want(lo["carrier"], True, "lo carrier")
want(lo["default_route"], False, "lo default_route")
bad = [p for p in d["problems"] if "net" in (p["path"] or "") or p["path"] == "getifaddrs"]
want(bad, [], "network problems")
'
lacks "$TMP/a1.json" sp0b
lacks "$TMP/a1.json" 198.18.0.2

# And B sees only its own end.
ns_json "$B" "$TMP/b1.json"
py "$TMP/b1.json" '
want([n["name"] for n in d["netdevs"]], ["lo", "sp0b"], "netdevs in B")
want(nd("sp0b")["ipv4"], [{"address": "198.18.0.2", "prefix_len": 24}], "ipv4 of sp0b")
'

# A default route through B.
ip -n "$A" route add default via 198.18.0.2 dev sp0a
ns_json "$A" "$TMP/a2.json"
facts "$A" sp0a "$TMP/f2.json"
check_dev "$TMP/a2.json" "$TMP/f2.json" sp0a
py "$TMP/a2.json" '
want(nd("sp0a")["default_route"], True, "default_route of sp0a")
want(nd("lo")["default_route"], False, "default_route of lo")
'

# The table in A runs too.
ns_sparkctl "$A" topo
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "sparkctl topo in A exited $status"; }

# ---- capture in A, replay outside -------------------------------------------
ns_sparkctl "$A" capture "$TMP/capA"
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "sparkctl capture in A exited $status"; }
expect 0 "$SPARKCTL" topo --root "$TMP/capA" --json
cp "$TMP/out" "$TMP/replay.json"
same_but_source "$TMP/capA/.sparkctl/inventory.json" "$TMP/replay.json"
netdevs_of "$TMP/a2.json" "$TMP/live-netdevs.json"
netdevs_of "$TMP/replay.json" "$TMP/replay-netdevs.json"
same "$TMP/live-netdevs.json" "$TMP/replay-netdevs.json"
py "$TMP/replay.json" '
n = nd("sp0a")
want((n["mtu"], n["carrier"], n["default_route"]), (9000, True, True), "replayed sp0a")
want(n["ipv4"], [{"address": "198.18.0.1", "prefix_len": 24},
                 {"address": "198.19.7.1", "prefix_len": 16}], "replayed ipv4")
want(d["problems"], [], "problems of the replay")
'
# The replay reads the capture, not this host: this host has no sp0a.
[ ! -e /sys/class/net/sp0a ] || fail "sp0a is visible on this host"

# The capture's address file has the form of 'ip -j address show': the real
# tool's output (with all its other keys) replays to the same addresses.
ip netns exec "$A" ip -j address show > "$TMP/capA/.sparkctl/ip-address.json"
contains "$TMP/capA/.sparkctl/ip-address.json" '"valid_life_time"'
expect 0 "$SPARKCTL" topo --root "$TMP/capA" --json
cp "$TMP/out" "$TMP/replay-ip.json"
netdevs_of "$TMP/replay-ip.json" "$TMP/replay-ip-netdevs.json"
same "$TMP/live-netdevs.json" "$TMP/replay-ip-netdevs.json"
py "$TMP/replay-ip.json" 'want(d["problems"], [], "problems of the replay of ip(8) output")'

# ---- the link goes down -----------------------------------------------------
ip -n "$A" link set sp0a down
wait_until 10 "sp0a to go down" \
  sh -c '[ "$(ip netns exec "$1" cat /sys/class/net/sp0a/operstate)" = down ]' sh "$A"
ns_json "$A" "$TMP/a3.json"
facts "$A" sp0a "$TMP/f3.json"
check_dev "$TMP/a3.json" "$TMP/f3.json" sp0a
py "$TMP/a3.json" '
n = nd("sp0a")
want(n["operstate"], "down", "operstate when down")
if n["carrier"] not in (False, None):
    sys.exit("carrier of a down link: %r" % n["carrier"])
want(n["mtu"], 9000, "mtu when down")
want(n["ipv4"], [{"address": "198.18.0.1", "prefix_len": 24},
                 {"address": "198.19.7.1", "prefix_len": 16}], "ipv4 when down")
want(n["default_route"], False, "default_route through a down link")
bad = [p for p in d["problems"] if "net" in (p["path"] or "") or p["path"] == "getifaddrs"]
want(bad, [], "network problems when down")
'
ns_sparkctl "$A" topo
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "sparkctl topo in A exited $status when down"; }

# ... and a capture of the down link replays the same.
ns_sparkctl "$A" capture "$TMP/capA-down"
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "sparkctl capture in A exited $status when down"; }
expect 0 "$SPARKCTL" topo --root "$TMP/capA-down" --json
cp "$TMP/out" "$TMP/replay-down.json"
same_but_source "$TMP/capA-down/.sparkctl/inventory.json" "$TMP/replay-down.json"
netdevs_of "$TMP/a3.json" "$TMP/down-netdevs.json"
netdevs_of "$TMP/replay-down.json" "$TMP/replay-down-netdevs.json"
same "$TMP/down-netdevs.json" "$TMP/replay-down-netdevs.json"
