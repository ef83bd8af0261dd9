#!/usr/bin/python3
"""Run a command with its stderr (and with --both its stdout) on a pty.

usage: pty-run.py [--both] [--release-on TEXT --release-file PATH] DIR CMD...

The terminal's bytes go to DIR/tty, stdout (without --both) to DIR/out, the
exit status to DIR/status.  The pty is 200 columns wide (a progress line is
cut to the terminal's width); a command still running after 300 s is killed.  --release-on: once
TEXT has appeared on the terminal, PATH is created (a stand-in waiting for
it then goes on), so a test never depends on how fast the machine is.
"""
import argparse, fcntl, os, pty, select, struct, subprocess, sys, termios, time

ap = argparse.ArgumentParser()
ap.add_argument("--both", action="store_true")
ap.add_argument("--release-on", default="")
ap.add_argument("--release-file")
ap.add_argument("dir")
ap.add_argument("argv", nargs=argparse.REMAINDER)
a = ap.parse_args()
want = a.release_on.encode()

master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
with open(f"{a.dir}/out", "wb") as out:
    p = subprocess.Popen(a.argv, stdin=subprocess.DEVNULL,
                         stdout=slave if a.both else out, stderr=slave)
os.close(slave)
tty, deadline = b"", time.monotonic() + 300
while True:
    if time.monotonic() > deadline:
        p.kill()
        sys.exit(f"still running after 300 s: {a.argv}")
    r, _, _ = select.select([master], [], [], 0.2)
    if r:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if not data:
            break
        tty += data
    if want and want in tty and not os.path.exists(a.release_file):
        open(a.release_file, "w").close()
    if not r and p.poll() is not None:
        break
p.wait()
open(f"{a.dir}/tty", "wb").write(tty)
open(f"{a.dir}/status", "w").write(str(p.returncode))
