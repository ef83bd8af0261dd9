# tests/netns/netns.sh - sourced by the netns tests after tests/lib.sh.
#
# Every network these tests build lives in network namespaces that the test
# creates itself, named after its process id so that parallel runs never
# collide, on addresses of the benchmarking range 198.18.0.0/15 (RFC 2544)
# or loopback.  Namespaces are deleted when the test ends, however it ends;
# deleting a namespace also deletes the links inside it.

# The Python interpreter itself, resolved once (a wrapper script in PATH can
# cost more than the test's own work on every call).
PYTHON=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 is needed"

# new_ns VAR SUFFIX: create the namespace "sparkctl-PID-SUFFIX", store its
# name in VAR and delete it at exit.  Its loopback is brought up.
new_ns() {
  local name="sparkctl-$$-$2"
  at_exit "ip netns del '$name' 2> /dev/null"
  ip netns add "$name" || fail "cannot create network namespace $name"
  ip -n "$name" link set lo up
  eval "$1=\$name"
}

# wait_until SECONDS WHAT CMD...: poll CMD until it succeeds; fail after SECONDS.
wait_until() {
  local limit=$1 what=$2 i=0
  shift 2
  while ! "$@" > /dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -le "$((limit * 50))" ] || fail "timed out after ${limit}s waiting for $what"
    sleep 0.02
  done
}

# link_ready NS DEV: DEV in NS has carrier and its operstate is "up" (the
# kernel updates operstate a moment after carrier).
link_ready() {
  [ "$(ip netns exec "$1" cat "/sys/class/net/$2/carrier" "/sys/class/net/$2/operstate" 2> /dev/null)" \
    = "$(printf '1\nup')" ]
}

# has_link_local NS DEV: DEV in NS has its IPv6 link-local address.
has_link_local() {
  [ -n "$(ip -n "$1" -6 -o address show dev "$2" scope link)" ]
}

# ns_sparkctl NS ARGS...: run sparkctl in NS (through 'run': $TMP/out, $status).
ns_sparkctl() {
  local ns=$1
  shift
  run ip netns exec "$ns" "$SPARKCTL" "$@"
}

# ns_json NS FILE: 'sparkctl topo --json' in NS must succeed; its JSON goes to FILE.
ns_json() {
  expect 0 ip netns exec "$1" "$SPARKCTL" topo --json
  "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" \
    || fail "sparkctl topo --json in $1 printed invalid JSON"
  cp "$TMP/out" "$2"
}

# same_but_source A B: the JSON documents A and B are equal except for their
# top-level "source" and "root" fields (a live probe against its replay).
same_but_source() {
  "$PYTHON" - "$1" "$2" "$TMP/norm-a.json" "$TMP/norm-b.json" <<'PY'
import json, sys
for src, dst in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])):
    d = json.load(open(src))
    for k in ("source", "root"):
        if k not in d:
            sys.exit("%s has no '%s' field" % (src, k))
        d[k] = "(normalised)"
    with open(dst, "w") as f:
        json.dump(d, f, indent=2)
        f.write("\n")
PY
  diff -u "$TMP/norm-a.json" "$TMP/norm-b.json" >&2 || fail "$1 and $2 differ beyond source/root"
}

# netdevs_of FILE OUT: the "netdevs" array of the inventory FILE, as JSON, in OUT.
netdevs_of() {
  "$PYTHON" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["netdevs"], indent=2))' \
    "$1" > "$2"
}

# py FILE CODE ARGS...: run Python CODE with the JSON document FILE as 'd' and
# ARGS in the list 'args'; CODE fails the test by raising or with sys.exit(MESSAGE).
py() {
  local file=$1 code=$2
  shift 2
  "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]))
args = sys.argv[3:]
def nd(name):
    m = [n for n in d["netdevs"] if n["name"] == name]
    if len(m) != 1:
        sys.exit("netdev %r appears %d times in %s" % (name, len(m), [n["name"] for n in d["netdevs"]]))
    return m[0]
def want(got, exp, what):
    if got != exp:
        sys.exit("%s: got %r, expected %r" % (what, got, exp))
exec(sys.argv[2])
' "$file" "$code" "$@" || fail "check on $file failed"
}

# run CMD... (tests/lib.sh's, and so also expect): in addition, a sanitizer
# report on stderr fails the test even where a failing exit status is expected.
run() {
  set +e
  "$@" > "$TMP/out" 2> "$TMP/err"
  status=$?
  set -e
  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/err"; then
    cat "$TMP/err" >&2
    fail "'$*' raised a sanitizer report"
  fi
}
