#!/usr/bin/env bash
# sparkctl discover against real avahi-daemons in network namespaces: three
# nodes on a link-local bridge (169.254.0.0/16), two of them also on a
# second bridge (198.18.0.0/24).  node1 and node2 run avahi with the file
# 'sparkctl publish --root' wrote (node2 also the usual _ssh._tcp file);
# node3 runs none.  discover lists exactly the nodes that answer, with the
# ids publish made, once per node however many links it is seen on.  Then a
# real name conflict between two avahi-daemons is reported as name churn.
. "$SRCDIR/tests/lib.sh"
require_root
. "$SRCDIR/tests/netns/netns.sh"
. "$SRCDIR/tests/discover/discover.sh"

bridge brl
bridge brf
for i in 1 2 3; do
  new_ns N$i n$i
done
plug "$N1" ll0 brl 169.254.10.1/16
plug "$N2" ll0 brl 169.254.10.2/16
plug "$N3" ll0 brl 169.254.10.3/16
plug "$N1" fab0 brf 198.18.0.1/24
plug "$N2" fab0 brf 198.18.0.2/24

for i in 1 2; do
  mkdir -p "$TMP/root$i"
  expect 0 "$SPARKCTL" publish --root "$TMP/root$i"
  contains "$TMP/out" "wrote $TMP/root$i/etc/avahi/services/sparkctl.service"
  id=$(cat "$TMP/root$i/etc/sparkctl/node-id")
  eval "ID$i=\$id"
done
[ "$ID1" != "$ID2" ] || fail "two nodes got the same id"
cp /usr/share/doc/avahi-daemon/examples/ssh.service "$TMP/root2/etc/avahi/services/" 2> /dev/null \
  || cat > "$TMP/root2/etc/avahi/services/ssh.service" <<'XML'
<?xml version="1.0" standalone='no'?>
<!DOCTYPE service-group SYSTEM "avahi-service.dtd">
<service-group><name replace-wildcards="yes">%h</name>
<service><type>_ssh._tcp</type><port>22</port></service></service-group>
XML
start_avahi "$N1" node1 ll0,fab0 "$TMP/root1/etc/avahi/services"
start_avahi "$N2" node2 ll0,fab0 "$TMP/root2/etc/avahi/services"

# hosts FILE: "host id interfaces addresses" per host of discover's JSON, sorted.
hosts() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for h in d["hosts"]:
    print(h["host"], h["id"], ",".join(sorted(h["interfaces"])), ",".join(a for a in h["addresses"] if ":" not in a),
          "self" if h["this_host"] else "other")
PY
}

# From node3 (no avahi) on its one link: node1 and node2, with their ids.
ns_sparkctl "$N3" discover --iface ll0 --json
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "discover from node3 exited $status"; }
json_valid discover "$TMP/out"
cp "$TMP/out" "$TMP/from3.json"
hosts "$TMP/from3.json" > "$TMP/hosts3"
printf '%s\n' "node1 $ID1 ll0 169.254.10.1 other" "node2 $ID2 ll0 169.254.10.2 other" > "$TMP/want3"
diff -u "$TMP/want3" "$TMP/hosts3" >&2 || fail "discover from node3 found other hosts"

# From node1 on both links: node2 is one host seen on two interfaces, with
# both addresses; node1's own avahi answers too, marked as this host.
ns_sparkctl "$N1" discover --iface ll0,fab0 --json
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "discover from node1 exited $status"; }
hosts "$TMP/out" > "$TMP/hosts1"
grep -q "^node2 $ID2 fab0,ll0 " "$TMP/hosts1" || { cat "$TMP/hosts1" >&2; fail "node2 is not one host on two interfaces"; }
grep "^node2 " "$TMP/hosts1" | grep -q "169.254.10.2" || fail "node2's link-local address is missing"
grep "^node2 " "$TMP/hosts1" | grep -q "198.18.0.2" || fail "node2's fabric address is missing"
[ "$(grep -c '^node2 ' "$TMP/hosts1")" = 1 ] || fail "node2 is listed twice"
grep -q "^node1 $ID1 .* self$" "$TMP/hosts1" || { cat "$TMP/hosts1" >&2; fail "node1 is not marked as this host"; }
lacks "$TMP/hosts1" node3

# The text: one line per host, the interfaces asked on named.
ns_sparkctl "$N3" discover --iface ll0
[ "$status" = 0 ] || fail "discover (text) exited $status"
contains "$TMP/out" "asked on ll0 (169.254.10.3)"
contains "$TMP/out" "$ID1"
contains "$TMP/out" "node2.local"
no_trailing_blanks "$TMP/out"

# --service _ssh._tcp: only node2 advertises it; no id there.
ns_sparkctl "$N3" discover --iface ll0 --service _ssh._tcp --json
[ "$status" = 0 ] || fail "discover --service _ssh._tcp exited $status"
hosts "$TMP/out" > "$TMP/hosts-ssh"
printf '%s\n' "node2 None ll0 169.254.10.2 other" > "$TMP/want-ssh"
diff -u "$TMP/want-ssh" "$TMP/hosts-ssh" >&2 || fail "--service _ssh._tcp found other hosts"

# Both services of node2 merge into one host (by its name).
[ "$(grep -c '^node2 ' "$TMP/hosts3")" = 1 ] || fail "node2's two services are two hosts"
/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
h = [h for h in d["hosts"] if h["host"] == "node2"][0]
assert sorted(h["services"]) == ["_sparkctl._tcp", "_ssh._tcp"], h["services"]
assert h["version"], h
' "$TMP/from3.json" || fail "node2 does not carry both services"

# Nothing answers on a link without responders: exit 0, an empty list, a note.
new_ns N4 n4
plug "$N4" lone0 brf 198.18.0.4/24
ip -n "$HUB" link set brl down
ns_sparkctl "$N3" discover --iface ll0 --json --reply-timeout 0.3
[ "$status" = 0 ] || fail "discover with no answer exited $status"
/usr/bin/python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["hosts"] == []' "$TMP/out" \
  || fail "hosts listed with no responder"
contains "$TMP/err" "no host answered"

# avahi's name churn: a third avahi-daemon, on node3, also called node1 meets
# node1's and renames itself node1-2.  Seen from node3 under the host name
# node1 (its own UTS namespace): this node is answering as node1-2.local, and
# another host answers as node1.local - two findings, the hosts still listed.
ip -n "$HUB" link set brl up
mkdir -p "$TMP/root3"
expect 0 "$SPARKCTL" publish --root "$TMP/root3"
start_avahi "$N3" node1 ll0 "$TMP/root3/etc/avahi/services"
grep -q "Host name is node1-2.local" "$TMP/avahi-$N3.log" \
  || { cat "$TMP/avahi-$N3.log" >&2; fail "avahi on node3 did not rename itself node1-2"; }
run ip netns exec "$N3" unshare -u sh -c 'hostname node1 && exec "$@"' sh \
  "$SPARKCTL" discover --iface ll0 --service _sparkctl._tcp --json
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "discover under the name node1 exited $status"; }
/usr/bin/python3 - "$TMP/out" <<'PY' || fail "avahi's name churn was not reported"
import json, sys
d = json.load(open(sys.argv[1]))
f = "\n".join(d["findings"])
assert "avahi calls this node node1-2.local, not node1.local" in f, f
assert "another host (169.254.10.1) answers as node1.local" in f, f
assert [h["host"] for h in d["hosts"]] == ["node1", "node1-2", "node2"], d["hosts"]
PY

# doctor sees the same churn with no network traffic, from avahi-daemon's
# process title: node3's daemon, the one in node3's network namespace (node1's,
# also titled with a name and with a lower pid, is another node's).
run ip netns exec "$N3" unshare -u sh -c 'hostname node1 && exec "$@"' sh \
  "$SPARKCTL" doctor --only net.avahi_name --json
/usr/bin/python3 - "$TMP/out" <<'PY' || { cat "$TMP/out" "$TMP/err" >&2; fail "doctor did not see avahi's name churn"; }
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["check"] == "net.avahi_name"]
assert len(f) == 1 and f[0]["status"] == "WARN", f
assert "calls this node node1-2.local, not node1.local" in f[0]["message"], f
assert "systemctl restart avahi-daemon" in f[0]["fix"], f
PY
# node2's daemon holds its own name.
run ip netns exec "$N2" unshare -u sh -c 'hostname node2 && exec "$@"' sh \
  "$SPARKCTL" doctor --only net.avahi_name --json
grep -q '"status": "PASS"' "$TMP/out" && contains "$TMP/out" "avahi-daemon holds node2.local" \
  || { cat "$TMP/out" "$TMP/err" >&2; fail "doctor on node2: not avahi's own name"; }
# A capture of node3 keeps that title, and no other process's command line
run ip netns exec "$N3" "$SPARKCTL" capture "$TMP/cap3"
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "capture on node3 exited $status"; }
# (its title and NUL: what follows in the argument area is not kept).
printf 'avahi-daemon: running [node1-2.local]\0' > "$TMP/title"
set -- "$TMP"/cap3/proc/*/cmdline
[ $# = 1 ] || fail "the capture holds other command lines: $*"
cmp -s "$1" "$TMP/title" || fail "the captured title: $(od -c "$1")"
expect 0 "$SPARKCTL" topo --root "$TMP/cap3" --json
grep -q '"avahi_host_name": "node1-2.local"' "$TMP/out" || fail "the capture lost avahi's name"
