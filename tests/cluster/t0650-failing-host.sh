#!/usr/bin/env bash
# Across nodes, an error names the node that failed, never one that was fine:
# launch, status, doctor -H, top -H and bench link on node0 (real sshd in a
# namespace) and nosuch.invalid (a name that cannot resolve).  And the
# commands that reach nodes through a session (status, doctor -H, top -H,
# bench link) use launch's key exchange: curve25519 before sntrup761, kept
# per host in the shared control directory.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
cluster_up 2
export TMPDIR=$TMP
bad=nosuch.invalid

# node0 is fine: not blamed, whether $bad fails at once or once node0 is
# ready (as a name that takes the resolver long to refuse does): then node0 is
# told to end and its agent exits 0 - it was not lost.
cat > "$TMP/ssh-slow-bad" << EOF2
#!/bin/sh
case " \$* " in
*" -- $bad "*)
  for i in \$(seq 100); do
    ip netns pids "$(cluster_ns node0)" | xargs -r ps -o args= -p 2> /dev/null |
      grep -q '[a]gent launch' && break
    sleep 0.1
  done
  sleep 1 ;;
esac
exec "$SPARKCTL_SSH" "\$@"
EOF2
chmod +x "$TMP/ssh-slow-bad"
for ssh in "$SPARKCTL_SSH" "$TMP/ssh-slow-bad"; do
  for order in "node0,$bad" "$bad,node0"; do
    SPARKCTL_SSH=$ssh expect 3 "$SPARKCTL" launch -H "$order" -- true
    contains "$TMP/err" "cannot start on $bad"
    contains "$TMP/err" "the job failed on $bad"
    lacks "$TMP/err" "lost node0"
    lacks "$TMP/err" "on node0"
  done
done

expect 3 "$SPARKCTL" status -H "node0,$bad"
grep -qE "^node0 +up " "$TMP/out" || { cat "$TMP/out" >&2; fail "status: node0 is not up"; }
contains "$TMP/out" "$bad: unreachable: "
lacks "$TMP/out" "node0: unreachable"

expect 3 "$SPARKCTL" doctor -H "node0,$bad" --only rdma
grep -A1 "^$bad\$" "$TMP/out" | grep -q "ERROR  not inspected: " || { cat "$TMP/out" >&2; fail "doctor: $bad is not named"; }
grep -A1 "^node0\$" "$TMP/out" | grep -q "not inspected" && fail "doctor: node0 said not inspected"

run "$SPARKCTL" top -H "node0,$bad" -n 1
contains "$TMP/out" "[$bad]  unreachable: "
lacks "$TMP/out" "[node0]  unreachable"

run "$SPARKCTL" bench link -H "node0,$bad"
[ "$status" = 3 ] || { cat "$TMP/err" >&2; fail "bench link exited $status"; }
contains "$TMP/err" "$bad could not be inspected"
lacks "$TMP/err" "node0 could not be inspected"

# The key exchange: every ssh that status, doctor -H and top -H start names it
# (the cluster's OpenSSH 9.x lists sntrup761 first), and it is kept per host.
kex_file() { echo "$SPARKCTL_SSH_CONTROL_DIR/kex-$(printf %s "$1" | od -An -tx1 | tr -d ' \n')"; }
real_ssh=$SPARKCTL_SSH
cat > "$TMP/ssh-logged" << EOF2
#!/bin/sh
printf '%s\n' "\$*" >> "$TMP/ssh.log"
exec "$real_ssh" "\$@"
EOF2
chmod +x "$TMP/ssh-logged"
if "$real_ssh" -G node0 | grep -q '^kexalgorithms sntrup761'; then
  for cmd in "status -H node0,node1" "doctor -H node0,node1 --only rdma" "top -H node0,node1 -n 1"; do
    rm -f "$TMP/ssh.log" "$(kex_file node0)" "$(kex_file node1)"
    # shellcheck disable=SC2086 # the command's words
    SPARKCTL_SSH=$TMP/ssh-logged run "$SPARKCTL" $cmd
    for node in node0 node1; do
      [ -f "$(kex_file $node)" ] || fail "$cmd: no key exchange kept for $node"
      grep -q '^curve25519-sha256,' "$(kex_file $node)" || fail "$cmd: the kept key exchange of $node"
      grep -E -- "-- $node " "$TMP/ssh.log" | grep -v -- ' -G ' |
        grep -q -- "KexAlgorithms=curve25519-sha256," ||
        { cat "$TMP/ssh.log" >&2; fail "$cmd: ssh to $node without the fast key exchange"; }
    done
  done
else
  note "this OpenSSH does not put sntrup761 first: nothing to reorder"
fi
