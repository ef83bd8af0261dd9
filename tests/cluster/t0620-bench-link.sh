#!/usr/bin/env bash
# 'sparkctl bench link' between two namespace nodes with real sshd:
#  - RDMA with stand-in ib_write_bw / ib_write_lat on the nodes' PATH
#    (tests/cluster/perftest-standin.py): the right device, GID index and
#    port on the right node, servers on B and clients on A, both twins at
#    once; a degraded twin; a client that fails (the servers are ended at
#    once); a tool missing on one node; a port already taken;
#  - TCP for real with Debian's iperf3 over the veth twins: measured and
#    healthy against the line rate in the nodes' trees, then one twin shaped
#    with tc to a low rate: degraded.
# After every run no server, hold or ssh process is left.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
command -v iperf3 > /dev/null 2>&1 || fail "iperf3 is needed (apt-get install iperf3)"
command -v tc > /dev/null 2>&1 || fail "tc is needed (apt-get install iproute2)"
cluster_up 2
export TMPDIR=$TMP
hosts=node0,node1
echo "$FIXTURES/linkbench" > "$CLUSTER_DIR/fixtures-dir"
for n in node0 node1; do
  for tool in ib_write_bw ib_write_lat; do
    ln -s "$SRCDIR/tests/cluster/perftest-standin.py" "$CLUSTER_DIR/$n/bin/$tool"
  done
done
LOG=$CLUSTER_DIR/perftest.log
MODE=$CLUSTER_DIR/perftest.mode

# Nothing of a run is left: no stand-in, iperf3 or hold on the nodes, no ssh
# client of this cluster here.  Only this test's processes are looked at: the
# suite runs others that start holds and iperf3 at the same time.
nothing_left() {
  local left
  sleep 0.3
  left=$( {
    cluster_pids | xargs -r ps -o pid=,args= -p 2> /dev/null |
      grep -E "perftest-standin|$CLUSTER_DIR/node./bin/ib_write|iperf3 -|agent hold"
    pgrep -af "ssh -F $TMP/ssh_config"
  } || true)
  [ -z "$left" ] || fail "left behind after '$1': $left"
  ! ls -d "$TMP"/sparkctl-ssh-* 2> /dev/null || fail "an ssh control directory was left behind"
}

# The GID index of a node's RDMA device whose RoCE v2 GID holds the twin's address.
gid_of() {
  "$PYTHON" - "$(cluster_tree "$1")" "$2" "$3" <<'PY'
import ipaddress, os, sys
root, dev, addr = sys.argv[1:]
p = f"{root}/sys/class/infiniband/{dev}/ports/1"
want = ipaddress.IPv4Address(addr).packed.hex()
for g in sorted(os.listdir(f"{p}/gids"), key=int):
    v = open(f"{p}/gids/{g}").read().strip().replace(":", "")
    t = open(f"{p}/gid_attrs/types/{g}").read().strip()
    if t == "RoCE v2" and v == "00000000000000000000ffff" + want:
        print(g)
        break
else:
    sys.exit(f"no RoCE v2 GID of {addr} on {dev}")
PY
}
a0=$(gid_of node0 rocep1s0f1 198.19.177.11)
a1=$(gid_of node0 roceP2p1s0f1 198.19.178.11)
b0=$(gid_of node1 rocep1s0f1 198.19.177.12)
b1=$(gid_of node1 roceP2p1s0f1 198.19.178.12)

# ---- RDMA, healthy: both twins at once, 92.88 Gb/s each ----------------------
rm -f "$LOG" "$MODE"
expect 0 "$SPARKCTL" bench link -H "$hosts" --rdma -t 3 --qps 2 -o "$TMP/rdma.json"
nothing_left "bench link --rdma"
contains "$TMP/out" "RDMA write  node0 -> node1  (ib_write_bw -q 2 -s 65536, 3 s; ib_write_lat 2 B)"
contains "$TMP/out" "rocep1s0f1 -> rocep1s0f1"
contains "$TMP/out" "roceP2p1s0f1 -> roceP2p1s0f1"
grep -E "^p1 +sum of the twins +185\.76 +200 +healthy" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "no healthy sum row"; }
grep -E "^p1 +rocep1s0f1 -> rocep1s0f1 +$a0/$b0 +92\.88 +100 +1\.70" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "no row for the first twin"; }
"$PYTHON" - "$LOG" "$a0" "$a1" "$b0" "$b1" <<'PY' || fail "the stand-ins were not run as expected"
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
a0, a1, b0, b1 = sys.argv[2:]
def find(prog, node, dev):
    m = [r for r in runs if r["prog"] == prog and r["node"] == node and r["args"]["-d"] == dev]
    assert len(m) == 1, (prog, node, dev, runs)
    return m[0]
assert len(runs) == 8, runs
for prog in ("ib_write_bw", "ib_write_lat"):
    for dev, ga, gb, port, addr in (("rocep1s0f1", a0, b0, "18515", "198.19.177.12"),
                                    ("roceP2p1s0f1", a1, b1, "18516", "198.19.178.12")):
        s = find(prog, "node1", dev)
        c = find(prog, "node0", dev)
        assert s["host"] is None and c["host"] == addr, (s, c)
        assert s["args"]["-x"] == gb and c["args"]["-x"] == ga, (s, c)
        assert s["args"]["-p"] == c["args"]["-p"] == port, (s, c)
        assert s["args"]["-i"] == c["args"]["-i"] == "1"
        if prog == "ib_write_bw":
            for r in (s, c):
                assert r["args"]["-q"] == "2" and r["args"]["-D"] == "3", r
                assert r["args"]["-s"] == "65536" and "--report_gbits" in r["flags"], r
PY
json_valid bench-link "$TMP/rdma.json"
py "$TMP/rdma.json" '
want(d["client"], "node0", "client")
want(d["server"], "node1", "server")
want(d["tcp"], None, "tcp")
want(d["verdict"], "healthy", "verdict")
want(len(d["rdma"]), 1, "ports")
p = d["rdma"][0]
want((p["port"], p["verdict"], p["gbps"], p["line_gbps"]), ("p1", "healthy", 185.76, 200.0), "port")
want([(x["a_device"], x["gbps"], x["latency_us"], x["line_gbps"]) for x in p["paths"]],
     [("rocep1s0f1", 92.88, 1.70, 100.0), ("roceP2p1s0f1", 92.88, 1.70, 100.0)], "paths")
'
[ "$(stat -c %a "$TMP/rdma.json")" = 644 ] || fail "the JSON file is not mode 0644"

# ---- RDMA, one twin at 13 Gb/s: degraded, the PCIe link suspected -------------
rm -f "$LOG"
echo "gbps roceP2p1s0f1 13.05" > "$MODE"
expect 4 "$SPARKCTL" bench link -H "$hosts" --rdma -t 1
nothing_left "a degraded twin"
grep -E "^p1 +sum of the twins +105\.93 +200 +degraded" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "no degraded sum"; }
contains "$TMP/out" "port p1: degraded: roceP2p1s0f1 -> roceP2p1s0f1: 13.1 Gb/s of the 70.0 expected, as from a NIC whose PCIe link trained down"
contains "$TMP/out" "check: sparkctl doctor -H $hosts --only pci.link"
# With --color=always the verdict is yellow, the columns as without colour.
expect 4 "$SPARKCTL" bench link -H "$hosts" --rdma -t 1 --color=always
nothing_left "a degraded twin, in colour"
grep -qF "$(printf '\033[1;33mdegraded\033[0m')" "$TMP/out" || { cat -v "$TMP/out"; fail "the degraded verdict is not yellow"; }
sed 's/\x1b\[[0-9;]*m//g' "$TMP/out" | grep -E "^p1 +sum of the twins +105\.93 +200 +degraded$" > /dev/null ||
  { cat -v "$TMP/out"; fail "colour moved the columns"; }
# The same figure is healthy when the caller expects no more than 10 Gb/s per twin.
expect 0 "$SPARKCTL" bench link -H "$hosts" --rdma -t 1 --expect-gbps 10 --json
json_valid bench-link "$TMP/out"
py "$TMP/out" 'want(d["rdma"][0]["verdict"], "healthy", "verdict with --expect-gbps 10")'

# ---- RDMA, a client that fails: broken, and its server ended at once ----------
echo "fail-client roceP2p1s0f1" > "$MODE"
start=$(date +%s)
expect 4 "$SPARKCTL" bench link -H "$hosts" --rdma -t 1
nothing_left "a failed client"
[ $(($(date +%s) - start)) -lt 15 ] || fail "the servers were not ended at once after a client failed"
contains "$TMP/out" "roceP2p1s0f1 -> roceP2p1s0f1: ib_write_bw: Couldn't connect to 192.168.200.12:18515"
grep -E "^p1 +sum of the twins +92\.88 +200 +broken" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "no broken sum"; }
contains "$TMP/out" "only 1 of 2 twins carry their share"
rm -f "$MODE"

# ---- a tool missing on B: exit 3, how to install it, nothing left -------------
rm "$CLUSTER_DIR/node1/bin/ib_write_lat"
expect 3 "$SPARKCTL" bench link -H "$hosts" --rdma -t 1
nothing_left "a missing tool"
contains "$TMP/err" "ib_write_lat is not installed on node1: apt-get install perftest"
ln -s "$SRCDIR/tests/cluster/perftest-standin.py" "$CLUSTER_DIR/node1/bin/ib_write_lat"

# ---- a port already taken on B: refused before any client runs ----------------
rm -f "$LOG"
ip netns exec "$(cluster_ns node1)" "$PYTHON" -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 18516)); s.listen(1); time.sleep(60)' &
squatter=$!
at_exit "kill $squatter 2> /dev/null || true"
wait_until 10 "the squatter to listen" cluster_exec node1 sh -c "ss -ltn | grep -q ':18516 '"
expect 3 "$SPARKCTL" bench link -H "$hosts" --rdma -t 1
kill $squatter; wait $squatter 2> /dev/null || true
nothing_left "a taken port"
contains "$TMP/err" "the ib_write_bw server on node1: sparkctl agent: port 18516 is in use by pid $squatter"
! grep -q '"node": "node0"' "$LOG" || fail "a client ran although a server could not start"

# ---- TCP for real: iperf3 over both veth twins ---------------------------------
# A line rate of 1 Gb/s in the trees: healthy from 0.4 Gb/s, which a veth passes easily.
for n in node0 node1; do
  for d in enp1s0f1np1 enP2p1s0f1np1; do echo 1000 > "$(cluster_tree $n)/sys/class/net/$d/speed"; done
done
expect 0 "$SPARKCTL" bench link -H "$hosts" --tcp -t 2 -P 2 -o "$TMP/tcp.json"
nothing_left "bench link --tcp"
contains "$TMP/out" "TCP  node0 -> node1  (iperf3 -P 2, 2 s)"
contains "$TMP/out" "enp1s0f1np1 198.19.177.11 -> enp1s0f1np1 198.19.177.12"
json_valid bench-link "$TMP/tcp.json"
py "$TMP/tcp.json" '
want(d["rdma"], None, "rdma")
want([(p["a_netdev"], p["b_address"], p["verdict"], p["line_gbps"], p["mtu"]) for p in d["tcp"]],
     [("enp1s0f1np1", "198.19.177.12", "healthy", 1.0, 9000),
      ("enP2p1s0f1np1", "198.19.178.12", "healthy", 1.0, 9000)], "paths")
for p in d["tcp"]:
    assert p["gbps"] > 0.4 and p["retransmits"] >= 0 and p["error"] is None, p
'

# One twin shaped to 100 Mbit/s: degraded (10% of the line rate), the other healthy.
cluster_exec node0 tc qdisc add dev enp1s0f1np1 root tbf rate 100mbit burst 64kb latency 50ms
expect 4 "$SPARKCTL" bench link -H "$hosts" --tcp -t 2 -P 2 -o "$TMP/tcp.json"
nothing_left "a shaped link"
json_valid bench-link "$TMP/tcp.json"
py "$TMP/tcp.json" '
a, b = d["tcp"]
want((a["verdict"], b["verdict"], d["verdict"]), ("degraded", "healthy", "degraded"), "verdicts")
assert 0.05 < a["gbps"] < 0.2, a
want(a["doctor_check"], "link.speed", "check")
assert b["gbps"] > 0.4, b
'
contains "$TMP/out" "enp1s0f1np1 -> enp1s0f1np1: degraded:"
contains "$TMP/out" "check: sparkctl doctor -H $hosts --only link.speed"
cluster_exec node0 tc qdisc del dev enp1s0f1np1 root

# ---- sparkctl killed in the middle of a run: its clients and servers end too ----
# (Its SSH masters outlive a SIGKILL until ControlPersist ends them; they run nothing.)
tools_running() { pgrep -f "iperf3 -|agent hold" > /dev/null; }
"$SPARKCTL" bench link -H "$hosts" --tcp -t 60 -P 1 > "$TMP/killed.out" 2>&1 &
bench_pid=$!
at_exit "kill -9 $bench_pid 2> /dev/null || true"
wait_until 20 "the iperf3 clients to run" pgrep -f "iperf3 -c 198.19.178.12"
kill -KILL $bench_pid
wait $bench_pid 2> /dev/null || true
wait_until 10 "the iperf3 clients and servers to end" eval '! tools_running'
for m in "$TMP"/sparkctl-ssh-*/*; do "$SPARKCTL_SSH" -o ControlPath="$m" -O exit x 2> /dev/null || true; done
wait_until 10 "the ssh masters to end" eval '! pgrep -f "ssh: $TMP/sparkctl-ssh-"'
rm -rf "$TMP"/sparkctl-ssh-*
nothing_left "a killed bench link"

# ---- --all: RDMA, then TCP, in one report ---------------------------------------
expect 0 "$SPARKCTL" bench link -H "$hosts" -t 1 -P 1 -o "$TMP/all.json"
nothing_left "bench link --all"
json_valid bench-link "$TMP/all.json"
py "$TMP/all.json" 'want((d["verdict"], len(d["rdma"]), len(d["tcp"])), ("healthy", 1, 2), "all")'

# ---- usage ----------------------------------------------------------------------
expect 2 "$SPARKCTL" bench link -H node0 --tcp
contains "$TMP/err" "-H takes exactly two nodes, not 1"
expect 2 "$SPARKCTL" bench link -H "$hosts" --tcp --rdma
expect 2 "$SPARKCTL" bench link -H "$hosts" --expect-gbps fast
contains "$TMP/err" "bad --expect-gbps 'fast'"
expect 2 "$SPARKCTL" bench link -H "$hosts" --size 0
expect 2 "$SPARKCTL" bench link -H "$hosts" -t 0
# Old names: refused, naming the new one.
expect 2 "$SPARKCTL" bench link -H "$hosts" -q 2
contains "$TMP/err" "option '-q' is now '--qps'"
expect 2 "$SPARKCTL" bench link -H "$hosts" --json "$TMP/x.json"
contains "$TMP/err" "unexpected argument"
expect 2 "$SPARKCTL" bench link -H "$hosts" --json -o "$TMP/x.json"
contains "$TMP/err" "choose one"
# A node that cannot be reached: exit 3, named.
expect 3 "$SPARKCTL" bench link -H node0,nosuchnode --tcp
contains "$TMP/err" "nosuchnode could not be inspected"
nothing_left "an unreachable node"
