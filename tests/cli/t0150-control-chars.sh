#!/usr/bin/env bash
# Names and text from outside - inventories, captured trees, files, the
# command line - reach the terminal with their control characters escaped
# (\xNN): no escape sequence, BEL, DEL, C1 control or byte that is not UTF-8
# in what topo, doctor, env and netplan print, as text or as JSON, on stdout or
# stderr.
. "$SRCDIR/tests/lib.sh"

# checked STATUS CMD...: expect, then stdout and stderr are clean.
checked() {
  expect "$@"
  no_controls "$TMP/out" "$TMP/err"
}

# Hostile inventories: the fixture's hostname set to retitle the window, ring
# the bell and turn the text red; the kernel release clears the screen; with
# dev.json also a netdev, an RDMA device and the GPU renamed, everywhere they
# are named (a C1 CSI, DEL, BEL).
"$SPARKCTL" topo --root "$FIXTURES/spark-1cable" --json > "$TMP/plain.json"
python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
base = json.load(open(f'{tmp}/plain.json'))
def renamed(v, subs):
    if isinstance(v, str):
        for a, b in subs.items():
            v = v.replace(a, b)
        return v
    if isinstance(v, list):
        return [renamed(x, subs) for x in v]
    if isinstance(v, dict):
        return {renamed(k, subs): renamed(x, subs) for k, x in v.items()}
    return v
host = json.loads(json.dumps(base))
host['system']['hostname'] = '\x1b]0;PWNED\x07\x1b[31mRED'
host['system']['kernel'] = '6.11\x1b[2J'
json.dump(host, open(f'{tmp}/host.json', 'w'))
dev = renamed(host, {'enp1s0f1np1': 'enp1\x1b[2Jx', 'rocep1s0f1': 'roce\u009b31m\x7f',
                     'NVIDIA GB10': 'GB10\x07'})
json.dump(dev, open(f'{tmp}/dev.json', 'w'))
PY

# topo: text and JSON.
checked 0 "$SPARKCTL" topo --from "$TMP/host.json"
contains "$TMP/out" '\x1b]0;PWNED\x07\x1b[31mRED, Ubuntu'
contains "$TMP/out" 'kernel 6.11\x1b[2J'
checked 0 "$SPARKCTL" topo --from "$TMP/dev.json"
contains "$TMP/out" 'roce\xc2\x9b31m\x7f/1'
contains "$TMP/out" 'enp1\x1b[2Jx'
contains "$TMP/out" 'GB10\x07'
# The table still lines up: an escape is as wide as it is long.
python3 - "$TMP/out" <<'PY' || fail "the port table does not line up"
import sys
lines = open(sys.argv[1]).read().splitlines()
head = next(l for l in lines if l.startswith('PORT'))
col = head.index('STATE')
rows = [l for l in lines if '/1 ' in l]
assert len(rows) == 4 and all(r[col - 1] == ' ' and r[col] in 'AD' for r in rows), lines
PY
checked 0 "$SPARKCTL" topo --from "$TMP/dev.json" --json
contains "$TMP/out" '"hostname": "\u001B]0;PWNED\u0007\u001B[31mRED"'
contains "$TMP/out" '"roce\u009B31m\u007F"'
# The JSON holds the names exactly.
[ "$(json_get "$TMP/out" 'd["system"]["hostname"] == "\x1b]0;PWNED\x07\x1b[31mRED"')" = True ] ||
  fail "the JSON does not hold the hostname exactly"

# doctor: the node's name, the findings and their fixes; text and JSON.
for inv in host dev; do
  run "$SPARKCTL" doctor --from "$TMP/$inv.json"
  [ "$status" = 0 ] || [ "$status" = 4 ] || fail "doctor exited $status"
  no_controls "$TMP/out" "$TMP/err"
  contains "$TMP/out" '\x1b]0;PWNED\x07\x1b[31mRED ('
  run "$SPARKCTL" doctor --from "$TMP/$inv.json" --json
  no_controls "$TMP/out" "$TMP/err"
done
contains "$TMP/out" 'roce\u009B31m\u007F'
run "$SPARKCTL" doctor --from "$TMP/dev.json"
contains "$TMP/out" 'twins enP2p1s0f1np1 (192.168.178.11/24) and enp1\x1b[2Jx'
contains "$TMP/out" 'roce\xc2\x9b31m\x7f/1 runs at 200 Gb/s'

# env: a hostile hostname is escaped in the comments; every format.
for fmt in sh env docker json; do
  checked 0 "$SPARKCTL" env --from "$TMP/host.json" --format "$fmt" --explain
done
checked 0 "$SPARKCTL" env --from "$TMP/host.json"
contains "$TMP/out" '# sparkctl env: \x1b]0;PWNED\x07\x1b[31mRED, topology pair'
# A value with controls is never written where a shell or a terminal reads it:
# refused, escaped in the message; JSON carries it exactly.
for fmt in sh env docker; do
  checked 1 "$SPARKCTL" env --from "$TMP/dev.json" --format "$fmt"
  contains "$TMP/err" "NCCL_IB_HCA: the value '=roce\\xc2\\x9b31m\\x7f,roceP2p1s0f1' holds control characters"
  [ ! -s "$TMP/out" ] || fail "env --format $fmt printed a value it refused"
done
checked 0 "$SPARKCTL" env --from "$TMP/dev.json" --format json
contains "$TMP/out" '"NCCL_SOCKET_IFNAME": "=enp1\u001B[2Jx"'
checked 1 "$SPARKCTL" env --root "$FIXTURES/spark-1cable" --set $'X=a\e[31mb'
contains "$TMP/err" "X: the value 'a\\x1b[31mb' holds control characters"
# Two nodes: the messages that compare them name the nodes, escaped.
checked 4 "$SPARKCTL" env --from "$TMP/host.json" --from "$TMP/host.json" --format json
contains "$TMP/err" '\x1b]0;PWNED\x07\x1b[31mRED'

# netplan: the node's name in a YAML comment, escaped (a newline would end the
# comment); a device name it cannot write, escaped in the refusal.
checked 0 "$SPARKCTL" netplan --from "$TMP/host.json" --plan pair --node 0
contains "$TMP/out" '# Fabric of \x1b]0;PWNED\x07\x1b[31mRED: plan pair'
checked 1 "$SPARKCTL" netplan --from "$TMP/dev.json" --plan pair --node 0
contains "$TMP/err" 'cannot write the interface name of roce\xc2\x9b31m\x7f into netplan'

# A captured tree whose files hold controls and bytes that are not UTF-8.
cp -a "$FIXTURES/spark-1cable" "$TMP/tree"
printf 'h\033]0;PWNED\007\377\302\233x\n' > "$TMP/tree/proc/sys/kernel/hostname"
checked 0 "$SPARKCTL" topo --root "$TMP/tree"
contains "$TMP/out" 'h\x1b]0;PWNED\x07\xff\xc2\x9bx, Ubuntu'
checked 0 "$SPARKCTL" topo --root "$TMP/tree" --json
run "$SPARKCTL" doctor --root "$TMP/tree"
no_controls "$TMP/out" "$TMP/err"
contains "$TMP/out" 'h\x1b]0;PWNED\x07\xff\xc2\x9bx'
checked 0 "$SPARKCTL" env --root "$TMP/tree"
contains "$TMP/out" '# sparkctl env: h\x1b]0;PWNED\x07\xff\xc2\x9bx,'

# Errors about a file quote what is in it escaped: the bytes jansson shows
# near a syntax error, the keys on the path of a type error, the file name.
printf '{"schema_version": 1, "x": \033[31mRED}' > "$TMP/token.json"
printf '{"schema_version": 1, "x": "\302\23331m\177' > "$TMP/c1.json"
printf '{"schema_version": 1, "system": {"hostname": "a\377"}}' > "$TMP/utf8.json"
python3 - "$TMP" <<'PY'
import json, sys
d = json.load(open(f'{sys.argv[1]}/plain.json'))
d['rdma_devices'][0]['ports'][0]['counters'] = {'\x1b[31mx': 'text'}
json.dump(d, open(f'{sys.argv[1]}/key.json', 'w'))
PY
cp "$TMP/token.json" "$TMP/"$'bad\e[2J.json'
checked 1 "$SPARKCTL" topo --from "$TMP/token.json"
contains "$TMP/err" "invalid token near '\\x1b'"
checked 1 "$SPARKCTL" topo --from "$TMP/c1.json"
contains "$TMP/err" "near '\"\\xc2\\x9b31m\\x7f'"
checked 1 "$SPARKCTL" topo --from "$TMP/utf8.json"
checked 1 "$SPARKCTL" topo --from "$TMP/key.json"
contains "$TMP/err" 'counters.\x1b[31mx: expected a non-negative integer'
checked 1 "$SPARKCTL" topo --from "$TMP/"$'bad\e[2J.json'
contains "$TMP/err" 'bad\x1b[2J.json:1:'
run "$SPARKCTL" doctor --from "$TMP/token.json" --from "$TMP/key.json"
no_controls "$TMP/out" "$TMP/err"
contains "$TMP/out" "not inspected: $TMP/token.json:1:28: invalid token near '\\x1b'"

# The command line: a mistyped command or option, a host list.
checked 2 "$SPARKCTL" $'to\epo'
contains "$TMP/err" "'to\\x1bpo' is not a sparkctl command"
checked 2 "$SPARKCTL" $'--\e[2J'
checked 2 "$SPARKCTL" topo $'--\e[2J'
checked 2 "$SPARKCTL" doctor -H $'node\e]0;T\a'
contains "$TMP/err" "invalid host name 'node\\x1b]0;T\\x07'"
