#!/usr/bin/env bash
# What ssh and the nodes write on stderr reaches messages and JSON as a
# terminal shows it: ssh ends its lines with CR LF, and progress meters
# rewrite a line after a CR; no CR, escaped or not, is left in what status,
# doctor -H, top -H, bench link and launch say.  With -q, doctor and launch
# print no warning of ssh's, only errors.  ssh is a stand-in ($SPARKCTL_SSH)
# that runs the remote command here.
. "$SRCDIR/tests/lib.sh"

cat > "$TMP/ssh" << 'EOF2'
#!/bin/sh
# A stand-in for ssh: -G, -O say nothing; otherwise skip the options up to
# '--', then the host, and run the command here (mode "run", after a warning
# with CRs) or fail as ssh does when the host cannot be reached (mode "fail").
case "$1" in -G | -O*) exit 1 ;; esac
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift 2
case "$SSH_STANDIN_MODE" in
fail)
  printf 'ssh: connecting 10%%\rssh: connecting 90%%\rssh: connect to host fake port 22: Connection refused\r\n' >&2
  exit 255 ;;
*)
  printf "Warning: Permanently added 'fake' (ED25519) to the list of known hosts.\r\n" >&2
  exec sh -c "$*" ;;
esac
EOF2
chmod +x "$TMP/ssh"
export SPARKCTL_SSH=$TMP/ssh
# A name that is not this host's, so that it is reached over "ssh".
host=sparkctl-standin-node.invalid

# No CR in the files, and none escaped either.
no_cr() {
  local f
  for f in "$@"; do
    if grep -q $'\r' "$f" || grep -qF '\x0d' "$f"; then
      cat -A "$f" >&2
      fail "a carriage return reached $f"
    fi
  done
}

export SSH_STANDIN_MODE=fail
expect 3 "$SPARKCTL" status -H "$host"
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/out" "$host: unreachable: ssh: connect to host fake port 22: Connection refused (exit status 255)"
lacks "$TMP/err" "connecting"
expect 3 "$SPARKCTL" status -H "$host" --json
no_cr "$TMP/out" "$TMP/err"
python3 - "$TMP/out" << 'PY' || fail "status --json: the node's error"
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
want = "ssh: connect to host fake port 22: Connection refused (exit status 255)"
assert n["error"] == want, n["error"]
PY
run "$SPARKCTL" doctor -H "$host"
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/out" "not inspected: ssh: connect to host fake port 22: Connection refused"
run "$SPARKCTL" doctor -H "$host" --json
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/out" '"ssh: connect to host fake port 22: Connection refused (exit status 255)"'
run "$SPARKCTL" top -H "$host" -n 1
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/out" "Connection refused"
run "$SPARKCTL" bench link -H "$host,$host-2"
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/err" "Connection refused"
expect 3 "$SPARKCTL" launch -H "$host" -- true
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/err" "cannot start on $host: ssh: connect to host fake port 22: Connection refused"
lacks "$TMP/err" "connecting"
# Said once: as the reason the node could not start, not also as a line of its own.
[ "$(grep -c 'Connection refused' "$TMP/err")" = 1 ] || { cat "$TMP/err" >&2; fail "ssh's reason said more than once"; }

# ssh reaches the node, with a warning: shown (without its CR), except with -q.
export SSH_STANDIN_MODE=run
expect 0 "$SPARKCTL" launch -H "$host" -- true
no_cr "$TMP/out" "$TMP/err"
contains "$TMP/err" "sparkctl launch: $host: Warning: Permanently added 'fake' (ED25519) to the list of known hosts."
expect 0 "$SPARKCTL" launch -q -H "$host" -- echo done
[ ! -s "$TMP/err" ] || { cat "$TMP/err" >&2; fail "launch -q wrote to stderr"; }
contains "$TMP/out" "done"
run "$SPARKCTL" doctor -q -H "$host"
no_cr "$TMP/out" "$TMP/err"
lacks "$TMP/err" "Warning"
lacks "$TMP/out" "Warning"
