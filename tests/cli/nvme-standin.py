#!/usr/bin/python3
# A stand-in for nvme-cli's nvme, for the tests of 'sparkctl storage
# connect|disconnect': a real program on PATH that records its argv and
# replays what nvme-cli 2.3 printed in the VM (tests/fixtures/storage/), keeping the
# connection's state in a directory.  It stands in for the kernel and the
# target as well, so it shows what sparkctl asks and how it takes the
# answers, not that a volume connects: the real nvme-cli, nvme-tcp and
# nvmet run in the VM test of tests/storage/.
#
# $NVME_STANDIN_DIR holds:
#   argv          one line per call, written here
#   target        "up" (default), "down" (connection refused) or "hang"
#   offers        the NQN the target offers (default: the fixture's)
#   connect       "live" (default), "connecting" (never live), "fail", "hang"
#   connected     made by connect, removed by disconnect: the path's state
#   no-driver     list-subsys fails while nothing is connected, as nvme-cli
#                 does where no NVMe driver is loaded yet
import os, sys, time

FIX = os.path.join(os.environ["SRCDIR"], "tests", "fixtures", "storage")
NQN = "nqn.2026-11.io.sparkctl:shared"
state = os.environ["NVME_STANDIN_DIR"]


def get(name, default):
    try:
        with open(os.path.join(state, name)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return default


def opt(flag, default=None):
    a = sys.argv[1:]
    return a[a.index(flag) + 1] if flag in a else default


def hang():
    # Killed by sparkctl at its deadline; a child of ours must go too.
    if os.fork() == 0:
        with open(os.path.join(state, "grandchild"), "w") as f:
            f.write(str(os.getpid()))
        time.sleep(3600)
        os._exit(0)
    time.sleep(3600)


with open(os.path.join(state, "argv"), "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\n")
verb = sys.argv[1] if len(sys.argv) > 1 else ""

if verb == "discover":
    mode = get("target", "up")
    if mode == "hang":
        hang()
    if mode == "down":
        sys.stderr.write(open(os.path.join(FIX, "discover-refused.txt.err")).read())
        sys.exit(int(open(os.path.join(FIX, "discover-refused.txt.rc")).read()))
    text = open(os.path.join(FIX, "discover.json")).read()
    text = text.replace(NQN, get("offers", NQN)).replace("127.0.0.1", opt("-a"))
    sys.stdout.write(text.replace('"4420"', '"%s"' % opt("-s", "4420")))
elif verb == "connect":
    mode = get("connect", "live")
    if mode == "hang":
        with open(os.path.join(state, "connected"), "w") as f:
            f.write("connecting %s %s %s\n" % (opt("-n"), opt("-a"), opt("-s")))
        hang()
    if mode == "fail":
        sys.stderr.write(open(os.path.join(FIX, "connect-no-target.txt.err")).read())
        sys.exit(1)
    with open(os.path.join(state, "connected"), "w") as f:
        f.write("%s %s %s %s\n" % (mode, opt("-n"), opt("-a"), opt("-s")))
elif verb == "list-subsys":
    c = get("connected", "")
    if not c and os.path.exists(os.path.join(state, "no-driver")):
        print("Failed to scan topology: No such file or directory", file=sys.stderr)
        sys.exit(1)
    if not c:
        sys.exit(0)  # nvme-cli prints nothing without subsystems
    st, nqn, addr, port = c.split()
    text = open(os.path.join(FIX, "list-subsys.json")).read()
    text = text.replace(NQN, nqn).replace('"live"', '"%s"' % st)
    sys.stdout.write(text.replace("traddr=127.0.0.1,trsvcid=4420",
                                  "traddr=%s,trsvcid=%s" % (addr, port)))
elif verb == "disconnect":
    c = get("connected", "")
    n = 1 if c and (opt("-n") in (None, c.split()[1])) else 0
    if n:
        os.unlink(os.path.join(state, "connected"))
    print("NQN:%s disconnected %d controller(s)" % (opt("-n", opt("-d")), n))
else:
    print("nvme: unknown verb %s" % verb, file=sys.stderr)
    sys.exit(1)
