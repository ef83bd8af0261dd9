#!/usr/bin/env bash
# sparkctl discover against a crafted responder (tests/discover/responder.py)
# that answers with one host name under two ids, a name loop, a TXT string
# that overruns its record and a truncated packet: each a clear finding, the
# good answers still listed, no crash; and a bare PTR whose SRV, TXT and A
# discover asks for itself.  join --discovered skips the name with two ids.  Then --scan of a /29 with a listener
# on port 22, --scan refused above a /22, and bad options.
. "$SRCDIR/tests/lib.sh"
require_root
. "$SRCDIR/tests/netns/netns.sh"

new_ns A a
new_ns B b
ip -n "$A" link add d0 type veth peer name d1 netns "$B" || fail "cannot create a veth pair"
ip -n "$A" address add 198.18.5.1/29 dev d0
ip -n "$B" address add 198.18.5.2/29 dev d1
ip -n "$A" link set d0 up
ip -n "$B" link set d1 up
wait_until 10 "d0 to be up" link_ready "$A" d0
wait_until 10 "d1 to be up" link_ready "$B" d1

ip netns exec "$B" /usr/bin/python3 "$SRCDIR/tests/discover/responder.py" 198.18.5.2 "$TMP/ready" \
  > "$TMP/responder.log" 2>&1 &
at_exit "kill_child $!"
wait_until 10 "the responder to listen" test -e "$TMP/ready"

ns_sparkctl "$A" discover --iface d0 --service _sparkctl._tcp --json
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "discover exited $status"; }
json_valid discover "$TMP/out"
/usr/bin/python3 - "$TMP/out" <<'PY' || fail "the crafted answers were not reported as expected"
import json, sys
d = json.load(open(sys.argv[1]))
hosts = [(h["host"], h["id"], h["version"]) for h in d["hosts"]]
assert hosts == [("lazy", "d" * 32, "9.9"), ("twin", "a" * 32, "9.9"),
                 ("twin", "b" * 32, "9.9")], hosts
# lazy's SRV, TXT and A came only as answers to discover's follow-up questions
lazy = d["hosts"][0]
assert lazy["names"] == ["lazy.local"] and lazy["addresses"] == ["198.18.5.2"], lazy
f = "\n".join(d["findings"])
for want in ("twin.local answers with two node ids", "name loop",
             "a TXT string of 200 bytes", "from 198.18.5.2 was refused"):
    assert want in f, (want, f)
# the truncated packet: refused too (three refusals in all)
assert sum("was refused" in x for x in d["findings"]) == 3, d["findings"]
PY

# The text says the same, one warning line each.
ns_sparkctl "$A" discover --iface d0 --service _sparkctl._tcp
[ "$status" = 0 ] || fail "discover (text) exited $status"
contains "$TMP/out" "warning: twin.local answers with two node ids"
[ "$(grep -c '^warning: ' "$TMP/out")" = 4 ] || { cat "$TMP/out" >&2; fail "not four warnings"; }
no_controls "$TMP/out"

# join --discovered joins only what can be joined: twin (one name, two ids)
# is skipped with a line for each answer; lazy is found at its address and
# tried (an ssh that cannot connect: exit 3, naming it, nothing written).
mkdir -p "$TMP/home"
printf '#!/bin/sh\necho "ssh: connect to host port 22: Connection refused" >&2\nexit 255\n' \
  > "$TMP/no-ssh"
chmod +x "$TMP/no-ssh"
HOME=$TMP/home SPARKCTL_CLUSTER=$TMP/cluster.json SPARKCTL_SSH=$TMP/no-ssh \
  ns_sparkctl "$A" join --discovered --iface d0
[ "$status" = 3 ] || { cat "$TMP/out" "$TMP/err" >&2; fail "join --discovered exited $status, not 3"; }
a32=$(printf 'a%.0s' {1..32}) b32=$(printf 'b%.0s' {1..32})
contains "$TMP/err" "sparkctl join: twin answers with two node ids ($a32 and $b32): not joined"
contains "$TMP/err" "sparkctl join: twin answers with two node ids ($b32 and $a32): not joined"
contains "$TMP/out" "found lazy at 198.18.5.2 (d0)"
lacks "$TMP/out" "found twin"
contains "$TMP/err" "sparkctl join: lazy: cannot be reached"
[ ! -e "$TMP/cluster.json" ] || fail "a join that reached nobody wrote the cluster file"
[ ! -e "$TMP/home/.ssh" ] || fail "a join that reached nobody made ~/.ssh"

# --scan: a listener on port 22 of B; A's own address has none.
ip netns exec "$B" /usr/bin/python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("198.18.5.2", 22)); s.listen(16); open(sys.argv[1], "w").close()
while True: s.accept()[0].close()' "$TMP/ssh-ready" > /dev/null 2>&1 &
at_exit "kill_child $!"
wait_until 10 "the port-22 listener" test -e "$TMP/ssh-ready"
ns_sparkctl "$A" discover --scan 198.18.5.0/29 --connect-timeout 0.5 --json
[ "$status" = 0 ] || { cat "$TMP/err" >&2; fail "discover --scan exited $status"; }
json_valid discover "$TMP/out"
[ "$(json_get "$TMP/out" '[h["host"] for h in d["hosts"]]')" = "['198.18.5.2']" ] \
  || { cat "$TMP/out" >&2; fail "--scan did not find exactly the listener"; }

# Refused above a /22, and other bad options: exit 2, one line and the hint.
for bad in "--scan 10.0.0.0/21" "--scan nonsense" "--fabric --mgmt" "--service _http._tcp" \
  "--reply-timeout soon" "--connect-timeout 1" "--scan 10.0.0.0/24 --fabric" "--iface nosuch0" "--iface ,"; do
  # shellcheck disable=SC2086
  ns_sparkctl "$A" discover $bad
  [ "$status" = 2 ] || fail "discover $bad exited $status, not 2"
  [ "$(wc -l < "$TMP/err")" = 2 ] || { cat "$TMP/err" >&2; fail "discover $bad: not one line and the hint"; }
  [ ! -s "$TMP/out" ] || fail "discover $bad printed a result"
done
ns_sparkctl "$A" discover --scan 10.0.0.0/21
contains "$TMP/err" "the most it sweeps is a /22 (1024 addresses)"

# No fabric port in a namespace: --fabric has nowhere to ask (3, one line);
# the default falls back to the interfaces that are up, and says so.
ns_sparkctl "$A" discover --fabric
[ "$status" = 3 ] || fail "discover --fabric without fabric ports exited $status, not 3"
contains "$TMP/err" "no fabric port is up with an IPv4 address"
ns_sparkctl "$A" discover --reply-timeout 0.2
[ "$status" = 0 ] || fail "discover (default interfaces) exited $status"
contains "$TMP/out" "asked on d0 (198.18.5.1) (no fabric port is up: every interface that is up)"

# --mgmt: the interface of the default route; none yet, then through d0.
ns_sparkctl "$A" discover --mgmt
[ "$status" = 3 ] || fail "discover --mgmt without a default route exited $status, not 3"
contains "$TMP/err" "no interface with an IPv4 address carries the default route"
ip -n "$A" route add default via 198.18.5.2
ns_sparkctl "$A" discover --mgmt --service _sparkctl._tcp --json
[ "$status" = 0 ] || fail "discover --mgmt exited $status"
[ "$(json_get "$TMP/out" '(d["chosen_by"], [i["name"] for i in d["interfaces"]])')" = "('mgmt', ['d0'])" ] \
  || { cat "$TMP/out" >&2; fail "--mgmt did not ask on d0"; }
