# tests/fake/lib-fake.sh - sourced by the GPU tests, after tests/lib.sh.
#
# The tests get two arguments (tests/fake/meson.build): the directory of the
# stand-in libnvidia-ml.so.1, libcuda.so.1 and libnccl.so.2, and that of the
# broken ones.  Nothing of the caller's environment picks the fake machine.

FAKE_LIBDIR=${1:?usage: TEST FAKE_LIBDIR BROKEN_LIBDIR (meson test passes them)}
BROKEN_LIBDIR=${2:?usage: TEST FAKE_LIBDIR BROKEN_LIBDIR (meson test passes them)}
for f in libnvidia-ml.so.1 libcuda.so.1 libnccl.so.2; do
  [ -f "$FAKE_LIBDIR/$f" ] || fail "no $f in $FAKE_LIBDIR"
  [ -f "$BROKEN_LIBDIR/$f" ] || fail "no $f in $BROKEN_LIBDIR"
done
# A loader path without any of the three.
NO_LIBDIR=$TMP/no-libs
mkdir "$NO_LIBDIR"
unset SPARKCTL_FAKE_GPU SPARKCTL_FAKE_NCCL_VERSION

# fake PROFILE CMD...: CMD with the stand-ins first on the loader path,
# describing PROFILE (tests/fake/fake_gpu.h).
fake() {
  local profile=$1; shift
  env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU="$profile" "$@"
}

# quiet: the last command wrote nothing to stderr (the stand-ins report
# misuse there, and so do the sanitizers).
quiet() {
  [ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "unexpected output on stderr"; }
}

# json_check FILE: each line of stdin is 'EXPR => WANT', a Python expression
# on the JSON document d of FILE and what str() of it must be (True, None,
# 12, text without quotes).  One Python run checks them all and reports
# every mismatch.
json_check() {
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
bad = 0
for line in sys.stdin.read().splitlines():
    if not line.strip():
        continue
    expr, want = line.split(" => ", 1)
    got = str(eval(expr))
    if got != want:
        print("FAIL: %s is %r, expected %r" % (expr, got, want), file=sys.stderr)
        bad = 1
sys.exit(bad)
' "$1" || fail "$1 is not as expected"
}

# gpu_section FILE OUT: the "gpu" and "system.nccl" objects of 'topo --json'
# output FILE, with the stand-ins' directory written as @FAKE_LIBDIR@, as the
# golden files hold them.
gpu_section() {
  python3 - "$1" "$FAKE_LIBDIR" > "$2" << 'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
text = json.dumps({"gpu": d["gpu"], "nccl": d["system"]["nccl"]}, indent=2)
print(text.replace(sys.argv[2], "@FAKE_LIBDIR@"))
EOF
}

# gpu_table FILE OUT: the GPU block of 'topo' output FILE, up to the blank line.
gpu_table() {
  awk '/^GPU/ { on = 1 } on && /^$/ { exit } on' "$1" > "$2"
  [ -s "$2" ] || { cat "$1" >&2; fail "no GPU block in the output of topo"; }
}
