#!/usr/bin/env python3
# A stand-in for perftest's ib_write_bw and ib_write_lat on a namespace node
# (installed in the node's bin/ under both names): it checks its arguments
# against the node's tree ($SPARKCTL_ROOT) as the real tools would fail on
# them - the device exists, the GID index is a RoCE v2 IPv4 GID of the port -
# then does perftest's TCP handshake for real: the server listens on -p
# once, the client connects once (no retry) to the address it is given.
# What they print is a captured output of the real tool
# (tests/fixtures/linkbench).  Every run is logged, one JSON line, to
# $CLUSTER_DIR/perftest.log; $CLUSTER_DIR/perftest.mode lines change the
# behaviour for one device:
#   gbps DEV G         the client reports G Gb/s
#   fail-client DEV    the client fails as when the server is unreachable
import json
import os
import socket
import sys

BIN = os.path.dirname(os.path.abspath(sys.argv[0]))
CLUSTER_DIR = os.path.dirname(os.path.dirname(BIN))
FIXTURES = os.environ.get("PERFTEST_FIXTURES") or open(os.path.join(CLUSTER_DIR, "fixtures-dir")).read().strip()
prog = os.path.basename(sys.argv[0])
root = os.environ.get("SPARKCTL_ROOT", "/")


def die(msg, status=1):
    print(msg, file=sys.stderr, flush=True)
    sys.exit(status)


args = {"-i": "1"}
host = None
flags = []
argv = sys.argv[1:]
i = 0
while i < len(argv):
    a = argv[i]
    if a in ("-d", "-i", "-x", "-p", "-q", "-s", "-D"):
        if i + 1 >= len(argv):
            die(f"{prog}: option requires an argument -- '{a[1]}'")
        args[a] = argv[i + 1]
        i += 2
    elif a[:2] in ("-i", "-x", "-p", "-q", "-s", "-D") and len(a) > 2:
        args[a[:2]] = a[2:]
        i += 1
    elif a in ("--report_gbits", "-F"):
        flags.append(a)
        i += 1
    elif a.startswith("-"):
        die(f"{prog}: unrecognized option '{a}'")
    else:
        host = a
        i += 1

with open(os.path.join(CLUSTER_DIR, "perftest.log"), "a") as log:
    log.write(json.dumps({"node": socket.gethostname(), "prog": prog, "args": args,
                          "flags": flags, "host": host}) + "\n")

mode = {}
try:
    for line in open(os.path.join(CLUSTER_DIR, "perftest.mode")):
        w = line.split()
        if w:
            mode[(w[0], w[1])] = w[2:]
except FileNotFoundError:
    pass

dev = args.get("-d")
ib = f"{root}/sys/class/infiniband/{dev}"
if not dev or not os.path.isdir(ib):
    die(f" IB device {dev} not found\n Unable to find the Infiniband/RoCE device")
port = f"{ib}/ports/{args['-i']}"
gid = args.get("-x")
try:
    gtype = open(f"{port}/gid_attrs/types/{gid}").read().strip()
    gval = open(f"{port}/gids/{gid}").read().strip()
except (OSError, TypeError):
    die(f"Failed to query GID index {gid}\n Couldn't create IB resources")
if gtype != "RoCE v2" or not gval.startswith("0000:0000:0000:0000:0000:ffff:"):
    die(f"GID index {gid} of {dev} is {gtype} {gval}, not a RoCE v2 IPv4 GID")
if prog == "ib_write_bw" and "--report_gbits" not in flags:
    die("the stand-in prints Gb/s only")
tcp_port = int(args.get("-p", "18515"))

if host is None:
    # Server: one connection, then the exchanged report, then exit.
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", tcp_port))
    s.listen(1)
    s.settimeout(120)
    try:
        c, _ = s.accept()
    except socket.timeout:
        die(" Couldn't connect to the client (timed out)")
    s.close()
    peer = c.recv(256).decode()
    c.sendall(dev.encode())
    c.close()
    print(f"server {dev} paired with {peer}", flush=True)
    sys.exit(0)

if ("fail-client", dev) in mode:
    print(open(f"{FIXTURES}/ib_write_bw-26.04-err-connect.txt").read(), end="", flush=True)
    sys.exit(1)
try:
    c = socket.create_connection((host, tcp_port), timeout=10)
except OSError:
    die(f"Couldn't connect to {host}:{tcp_port}")
c.sendall(dev.encode())
c.recv(256)
c.close()
if prog == "ib_write_lat":
    print(open(f"{FIXTURES}/ib_write_lat-26.04.txt").read(), end="")
else:
    text = open(f"{FIXTURES}/ib_write_bw-26.04-duration-cpu-util-gbits.txt").read()
    if ("gbps", dev) in mode:
        text = text.replace("92.88", "%.2f" % float(mode[("gbps", dev)][0]))
    print(text, end="")
