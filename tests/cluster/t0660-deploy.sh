#!/usr/bin/env bash
# 'sparkctl deploy' and the nodes' sparkctl lookup, across two namespace
# nodes with real sshd: a node without sparkctl is said to be so (status,
# launch), deploy puts this binary in the node's ~/.local/bin (mode 0755,
# the same bytes) where the lookup then finds it, --to, a node of another
# architecture refused, and a deploy killed midway leaves nothing at the
# target; --deb; doctor -H's cluster.sparkctl.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/cluster/cluster.sh"
cluster_require
command -v unshare > /dev/null || skip "no unshare"
sys_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
! PATH=$sys_path command -v sparkctl > /dev/null || skip "sparkctl is installed on this machine's PATH"
cluster_up 2
export TMPDIR=$TMP

# The nodes share this machine's files, so this program's own path is
# found on them too: the client runs from a tmpfs of a mount namespace
# of its own, which the nodes (in the first one) do not see.
mkdir "$TMP/client"
client() {
  unshare -m --propagation private sh -c '
    mount -t tmpfs sparkctl-client "$0" && cp "$1" "$0/sparkctl" && shift && exec "$0/sparkctl" "$@"' \
    "$TMP/client" "$SPARKCTL" "$@"
}
home1=$CLUSTER_DIR/node1/home
cluster_remote_sparkctl node1 -

# No sparkctl on node1: status says so, with the command that fixes it.
expect 3 client status -H node0,node1
grep -E "^node0 +up " "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node0's row"; }
grep -E "^node1 +no sparkctl " "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node1's row"; }
contains "$TMP/out" "sparkctl is not installed on node1 (sparkctl deploy -H node1)"
not_contains() { ! grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' found in $1"; }; }
not_contains "$TMP/out" "unreachable"
expect 3 client status -H node0,node1 --json
json_valid status "$TMP/out"
py "$TMP/out" '
a, b = d["nodes"]
want((a["reachable"], a["sparkctl_missing"]), (True, False), "node0")
want((b["reachable"], b["sparkctl_missing"]), (False, True), "node1")
want(b["error"], "sparkctl is not installed on node1 (sparkctl deploy -H node1)", "node1 error")
'
# launch and doctor say the same.
expect 3 client launch -H node1 -- true
contains "$TMP/err" "sparkctl is not installed on node1 (sparkctl deploy -H node1)"
expect 3 client doctor -H node0,node1 --only cluster.ssh
contains "$TMP/out" "sparkctl is not installed on node1 (sparkctl deploy -H node1)"
# --remote-sparkctl is used alone: no lookup.
expect 3 "$SPARKCTL" status -H node1 --remote-sparkctl "$TMP/nowhere/sparkctl"
grep -E "^node1 +down " "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "--remote-sparkctl looked further"; }
# This program's path is the first place looked at.
expect 0 "$SPARKCTL" status -H node1

# deploy: the binary in ~/.local/bin, mode 0755, the same bytes; status finds it there.
expect 0 client deploy -H node1
grep -E "^node1 +$(uname -m) +installed +$home1/.local/bin/sparkctl$" "$TMP/out" > /dev/null ||
  { cat "$TMP/out"; fail "deploy's row"; }
[ "$(stat -c %a "$home1/.local/bin/sparkctl")" = 755 ] || fail "not mode 0755"
cmp "$SPARKCTL" "$home1/.local/bin/sparkctl" || fail "the copy differs"
expect 0 client status -H node0,node1
grep -E "^node1 +up " "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node1 after deploy"; }
# Again: the same binary is there, nothing changes.
expect 0 client deploy -H node1 --json
json_valid deploy "$TMP/out"
py "$TMP/out" '
n, = d["nodes"]
want((n["host"], n["result"], n["path"], n["error"]),
     ("node1", "unchanged", "'"$home1"'/.local/bin/sparkctl", None), "again")
'
ls -A "$home1/.local/bin" > "$TMP/files"
[ "$(cat "$TMP/files")" = sparkctl ] || { cat "$TMP/files"; fail "more than sparkctl left in ~/.local/bin"; }

# On the node's PATH, it is found there.
rm "$home1/.local/bin/sparkctl"
cluster_remote_sparkctl node1 "$SPARKCTL"
expect 0 client status -H node1
cluster_remote_sparkctl node1 -
expect 3 client status -H node1

# --to: relative to the node's home, or absolute; -q prints nothing but errors.
expect 0 client deploy -H node1 --to opt/bin/sparkctl -q
[ ! -s "$TMP/out" ] || { cat "$TMP/out"; fail "-q printed"; }
cmp "$SPARKCTL" "$home1/opt/bin/sparkctl" || fail "--to relative"
expect 0 client deploy -H node0,node1 --to "$TMP/to/sparkctl"
cmp "$SPARKCTL" "$TMP/to/sparkctl" || fail "--to absolute"

# A node of another architecture is refused, and nothing is copied there.
case $(uname -m) in x86_64) other=aarch64 ;; *) other=x86_64 ;; esac
printf '#!/bin/sh\n[ "$1" = -m ] && echo %s || exec /bin/uname "$@"\n' "$other" > "$CLUSTER_DIR/node1/bin/uname"
chmod +x "$CLUSTER_DIR/node1/bin/uname"
expect 4 client deploy -H node0,node1 --to "$TMP/arch/sparkctl"
contains "$TMP/err" "node1 is $other, and this sparkctl is for $(uname -m): not copied"
grep -E "^node1 +$other +wrong_arch +-$" "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node1's refusal"; }
grep -E "^node0 +$(uname -m) +installed " "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "node0 with it"; }
rm "$CLUSTER_DIR/node1/bin/uname"

# Killed midway: node1's copy stops after 64 KiB until the deploy is
# killed; the target is never partial, and the next deploy leaves only it.
cat > "$CLUSTER_DIR/node1/bin/cat" << EOF
#!/bin/sh
head -c 65536
: > "$TMP/midway"
while [ ! -e "$TMP/release" ]; do sleep 0.05; done
exec /bin/cat
EOF
chmod +x "$CLUSTER_DIR/node1/bin/cat"
target=$home1/cut/sparkctl
"$SPARKCTL" deploy -H node1 --to cut/sparkctl > "$TMP/cut.out" 2>&1 &
pid=$!
wait_until 60 "the copy to start" test -e "$TMP/midway"
kill -KILL "$pid"
wait "$pid" 2> /dev/null || true
rm -rf "$TMP"/sparkctl-ssh-* # what the killed deploy could not remove
: > "$TMP/release"
[ ! -e "$target" ] || fail "a partial file at the target"
wait_until 60 "node1's copy to end" sh -c "! ls -A '$home1/cut' | grep -q ."
[ ! -e "$target" ] || fail "a partial file at the target"
rm "$CLUSTER_DIR/node1/bin/cat"
expect 0 client deploy -H node1 --to cut/sparkctl
cmp "$SPARKCTL" "$target" || fail "the deploy after the cut one"
[ "$(ls -A "$home1/cut")" = sparkctl ] || { ls -A "$home1/cut"; fail "a temporary file left"; }

# --deb: the package's architecture against dpkg's on the node, then
# copied and installed with apt-get (a stand-in on node1 keeps what it got).
if command -v dpkg-deb > /dev/null && command -v dpkg > /dev/null; then
  mkdir -p "$TMP/pkg/DEBIAN" "$TMP/pkg/usr/bin"
  cp "$SPARKCTL" "$TMP/pkg/usr/bin/sparkctl"
  deb_arch=$(dpkg --print-architecture)
  printf 'Package: sparkctl\nVersion: 0.0.1\nArchitecture: %s\nMaintainer: t <t@example.invalid>\nDescription: t\n' \
    "$deb_arch" > "$TMP/pkg/DEBIAN/control"
  dpkg-deb --build --root-owner-group "$TMP/pkg" "$TMP/sparkctl.deb" > /dev/null
  cat > "$CLUSTER_DIR/node1/bin/apt-get" << EOF
#!/bin/sh
printf '%s\n' "\$*" > "$TMP/apt-args"
cp "\$4" "$TMP/apt-got.deb"
EOF
  printf '#!/bin/sh\n[ "$1" = --print-architecture ] && echo %s\n' "$deb_arch" > "$CLUSTER_DIR/node1/bin/dpkg"
  chmod +x "$CLUSTER_DIR/node1/bin/apt-get" "$CLUSTER_DIR/node1/bin/dpkg"
  expect 0 client deploy -H node1 --deb "$TMP/sparkctl.deb"
  grep -E "^node1 +$deb_arch +installed " "$TMP/out" > /dev/null || { cat "$TMP/out"; fail "--deb's row"; }
  cmp "$TMP/sparkctl.deb" "$TMP/apt-got.deb" || fail "the package arrived changed"
  grep -E '^install -y -q /.*/sparkctl.deb$' "$TMP/apt-args" > /dev/null || { cat "$TMP/apt-args"; fail "apt-get's arguments"; }
  other_deb=arm64
  [ "$deb_arch" != arm64 ] || other_deb=amd64
  printf '#!/bin/sh\n[ "$1" = --print-architecture ] && echo %s\n' "$other_deb" > "$CLUSTER_DIR/node1/bin/dpkg"
  rm "$TMP/apt-got.deb"
  expect 4 client deploy -H node1 --deb "$TMP/sparkctl.deb"
  contains "$TMP/err" "node1 is $other_deb, and this package is for $deb_arch: not copied"
  [ ! -e "$TMP/apt-got.deb" ] || fail "a package of another architecture was installed"
  rm "$CLUSTER_DIR/node1/bin/apt-get" "$CLUSTER_DIR/node1/bin/dpkg"
fi

# doctor -H: every node runs the same sparkctl, as each node's inventory says.
cluster_remote_sparkctl node1 "$SPARKCTL"
expect 0 client doctor -H node0,node1 --only cluster.sparkctl
contains "$TMP/out" "PASS  cluster.sparkctl  every node runs sparkctl"
cat > "$TMP/sparkctl-other" << EOF
#!/bin/sh
[ "\$1" = topo ] || exec "$SPARKCTL" "\$@"
"$SPARKCTL" "\$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
d["sparkctl_version"] = "0.0.1"
json.dump(d, sys.stdout)'
EOF
chmod +x "$TMP/sparkctl-other"
cluster_remote_sparkctl node1 "$TMP/sparkctl-other"
expect 4 client doctor -H node0,node1 --only cluster.sparkctl
contains "$TMP/out" "FAIL  cluster.sparkctl"
contains "$TMP/out" "runs sparkctl 0.0.1"
contains "$TMP/out" "sparkctl deploy -H"

# Usage.
expect 2 client deploy
expect 2 client deploy -H node1 --hostfile /dev/null
expect 2 client deploy -H node1 --deb x.deb --to y
expect 2 client deploy -H node1 --fanout 0
expect 1 client deploy -H node1 --deb "$TMP/nosuch.deb"
! ls -d "$TMP"/sparkctl-ssh-* 2> /dev/null || fail "an ssh control directory was left behind"
