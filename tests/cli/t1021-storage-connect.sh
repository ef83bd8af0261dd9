#!/usr/bin/env bash
# storage connect | disconnect through nvme-cli, against a stand-in nvme
# (tests/cli/nvme-standin.py): a real program on PATH that records how it is
# called and replays nvme-cli 2.3's output as captured in the VM
# (tests/fixtures/storage/).  It stands in for nvme-cli, the
# kernel and the target, so this shows what sparkctl asks and how it takes
# the answers; the real nvme-cli connects a real volume in the VM test
# (tests/storage/).
. "$SRCDIR/tests/lib.sh"

NQN=nqn.2026-11.io.sparkctl:shared
export NVME_STANDIN_DIR=$TMP/nvme
mkdir -p "$NVME_STANDIN_DIR" "$TMP/bin" "$TMP/empty"
ln -s "$SRCDIR/tests/cli/nvme-standin.py" "$TMP/bin/nvme"
# modprobe too: the host's must not load nvme-tcp here.  It records its
# arguments and answers as $NVME_STANDIN_DIR/modprobe-fails says.
cat > "$TMP/bin/modprobe" << 'EOF2'
#!/bin/sh
echo "$*" >> "$NVME_STANDIN_DIR/modprobe"
[ ! -e "$NVME_STANDIN_DIR/modprobe-fails" ] && exit 0
echo "modprobe: FATAL: Module nvme-tcp not found in directory /lib/modules/6.1.0" >&2
exit 1
EOF2
chmod +x "$TMP/bin/modprobe"
P=$TMP/bin:$PATH
calls() { cat "$NVME_STANDIN_DIR/argv" 2> /dev/null || :; }
reset() { rm -f "$NVME_STANDIN_DIR"/*; }

# Without nvme-cli: exit 3 and the package to install.
expect 3 env PATH="$TMP/empty" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN
contains "$TMP/err" "nvme-cli is not installed (Debian: apt-get install nvme-cli)"

# Connect: discover first, then connect with the reconnect settings, then the live path.
expect 0 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN
calls > "$TMP/calls"
cat > "$TMP/want" << EOF2
list-subsys -o json
discover -t tcp -a 127.0.0.1 -s 4420 -o json
connect -t tcp -n $NQN -a 127.0.0.1 -s 4420 -l 600 -c 10
list-subsys -o json
EOF2
same "$TMP/want" "$TMP/calls"
contains "$TMP/out" "$NQN: connected (127.0.0.1:4420)"
contains "$TMP/out" "nvme0 live from 127.0.0.1"
no_trailing_blanks "$TMP/out"

# Connected already: said so, nothing changed; as JSON too.
reset_calls() { rm -f "$NVME_STANDIN_DIR/argv"; }
reset_calls
expect 0 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1:4420 --nqn $NQN --json
[ "$(calls)" = "list-subsys -o json" ] || fail "connected again: $(calls)"
json_valid storage-connect "$TMP/out"
[ "$(json_get "$TMP/out" 'd["already_connected"]')" = True ] || fail "not said connected already"
[ "$(json_get "$TMP/out" 'd["controllers"][0]["state"]')" = live ] || fail "state"
[ "$(json_get "$TMP/out" 'd["target"]["port"]')" = 4420 ] || fail "port"

# Disconnect says how many controllers; again, that none is connected.
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect --nqn $NQN
contains "$TMP/out" "$NQN: disconnected 1 controller"
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect --nqn $NQN
contains "$TMP/out" "$NQN: not connected"

# Where no NVMe driver is loaded yet, list-subsys fails: nothing is connected.
touch "$NVME_STANDIN_DIR/no-driver"
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect --nqn $NQN
contains "$TMP/out" "$NQN: not connected"
expect 0 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN
contains "$TMP/out" "$NQN: connected (127.0.0.1:4420)"
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect --nqn $NQN

# The target does not answer: exit 3, nothing connected.
reset
echo down > "$NVME_STANDIN_DIR/target"
expect 3 env PATH="$P" "$SPARKCTL" storage connect --target 198.18.0.9 --nqn $NQN
contains "$TMP/err" "no NVMe/TCP target answers at 198.18.0.9:4420 (nvme discover: Failed to write to /dev/nvme-fabrics: Connection refused)"

calls | grep -q '^connect' && fail "connected to a target that is down"

# A target that does not offer the NQN: exit 3, naming what it offers.
reset
echo nqn.2026-01.org.example:other > "$NVME_STANDIN_DIR/offers"
expect 3 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN
contains "$TMP/err" "does not offer $NQN; it offers: nqn.2026-01.org.example:other"
calls | grep -q '^connect' && fail "connected to an NQN not offered"

# Nothing of the stand-in runs any more (its processes name $TMP/bin/nvme),
# nor the child it forked when it hung, if it got that far.
nothing_left() {
  local gc
  ! pgrep -f "$TMP/bin/nvme " > /dev/null || fail "a stand-in nvme still runs: $(pgrep -af "$TMP/bin/nvme ")"
  gc=$(cat "$NVME_STANDIN_DIR/grandchild" 2> /dev/null) || return 0
  ! kill -0 "$gc" 2> /dev/null || fail "the stand-in's child $gc still runs"
}

# A discover that hangs is stopped at the deadline: exit 5, nothing left running.
# (Deadlines of a few seconds: the steps before the one that hangs must fit on a
# busy machine.)
reset
echo hang > "$NVME_STANDIN_DIR/target"
expect 5 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN \
  --connect-timeout 3
contains "$TMP/err" "nvme discover did not finish within 3 s"
nothing_left

# A controller that never becomes live is disconnected again: no half connection.
reset
echo connecting > "$NVME_STANDIN_DIR/connect"
expect 5 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN \
  --connect-timeout 4
contains "$TMP/err" "no path of $NQN was live within 4 s; disconnected it"
calls | grep -qx 'disconnect -d nvme0' || fail "not disconnected: $(calls)"
[ ! -e "$NVME_STANDIN_DIR/connected" ] || fail "left connected"
# So is one whose connect hangs.
reset
echo hang > "$NVME_STANDIN_DIR/connect"
expect 5 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN \
  --connect-timeout 3
[ ! -e "$NVME_STANDIN_DIR/connected" ] || fail "left connected after a hung connect"
nothing_left
# A connect that fails: exit 3 with nvme's words.
reset
echo fail > "$NVME_STANDIN_DIR/connect"
expect 3 env PATH="$P" "$SPARKCTL" storage connect --target 127.0.0.1 --nqn $NQN
contains "$TMP/err" "nvme connect to 127.0.0.1:4420 failed: Failed to write to /dev/nvme-fabrics: Connection refused"

# Defaults from the plan this node keeps: target, port, NQN and interface.
reset
R=$TMP/root
mkdir -p "$R/etc/sparkctl/storage.d"
cat > "$R/etc/sparkctl/storage.d/mnt-shared.json" << EOF2
{"schema_version":1,"target":{"address":"198.18.0.1","port":4421},
 "nqn":"$NQN","mount":"/mnt/shared","fs":"ext4",
 "uuid":"0b0e4c8e-5d55-4d2c-9d3a-6c1e2f3a4b5c","interface":"veth-s1",
 "unit":"sparkctl-nvme-mnt-shared.service","node":"spark1",
 "nodes":[{"name":"spark1","access":"rw"}]}
EOF2
expect 0 env PATH="$P" "$SPARKCTL" storage connect --root "$R"
calls | grep -qx "connect -t tcp -n $NQN -a 198.18.0.1 -s 4421 -l 600 -c 10 -f veth-s1" ||
  fail "not the plan's connect: $(calls)"
# nvme-tcp was not loaded below that root: modprobe was asked for it.
[ "$(cat "$NVME_STANDIN_DIR/modprobe")" = nvme-tcp ] || fail "no modprobe nvme-tcp"
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect --root "$R"
contains "$TMP/out" "disconnected 1 controller"
# Loaded already: no modprobe.
reset
mkdir -p "$R/sys/module/nvme_tcp"
expect 0 env PATH="$P" "$SPARKCTL" storage connect --root "$R"
[ ! -e "$NVME_STANDIN_DIR/modprobe" ] || fail "modprobe with nvme-tcp loaded"
# A discover that fails where nvme-tcp cannot be loaded says why.
reset
rmdir "$R/sys/module/nvme_tcp"
echo down > "$NVME_STANDIN_DIR/target"
touch "$NVME_STANDIN_DIR/modprobe-fails"
expect 3 env PATH="$P" "$SPARKCTL" storage connect --root "$R"
contains "$TMP/err" "nvme-tcp is not loaded (modprobe nvme-tcp: modprobe: FATAL: Module nvme-tcp not found"
# Without a plan and without options: a usage error that says what to give.
expect 2 env PATH="$P" "$SPARKCTL" storage connect --root "$TMP/empty"
contains "$TMP/err" "give --nqn and --target"
# Two volumes planned: --mount chooses; without it, a usage error that says so.
reset
sed -e 's|/mnt/shared|/mnt/models|; s|mnt-shared|mnt-models|' -e "s|\"$NQN\"|\"$NQN-models\"|" \
  "$R/etc/sparkctl/storage.d/mnt-shared.json" > "$R/etc/sparkctl/storage.d/mnt-models.json"
expect 2 env PATH="$P" "$SPARKCTL" storage connect --root "$R"
contains "$TMP/err" "2 volumes are planned (/mnt/models, /mnt/shared): choose one with --mount"
expect 2 env PATH="$P" "$SPARKCTL" storage connect --root "$R" --mount /mnt/nothing
contains "$TMP/err" "no volume is planned at /mnt/nothing"
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect --root "$R" --mount /mnt/shared
contains "$TMP/out" "$NQN: not connected"
rm "$R/etc/sparkctl/storage.d/mnt-models.json"

# On nodes (-H): a line per node; this machine's name runs without SSH.
reset
expect 0 env PATH="$P" "$SPARKCTL" storage connect -H localhost --target 127.0.0.1 --nqn $NQN
contains "$TMP/out" "localhost: $NQN: connected (127.0.0.1:4420)"
echo down > "$NVME_STANDIN_DIR/target"
expect 0 env PATH="$P" "$SPARKCTL" storage disconnect -H localhost --nqn $NQN
contains "$TMP/out" "localhost: $NQN: disconnected 1 controller"
expect 3 env PATH="$P" "$SPARKCTL" storage connect -H localhost --target 127.0.0.1 --nqn $NQN
contains "$TMP/out" "localhost: failed:"
contains "$TMP/out" "no NVMe/TCP target answers at 127.0.0.1:4420"

# A target that is neither an address nor a name that resolves (RFC 2606).
expect 2 env PATH="$P" "$SPARKCTL" storage connect --target nosuch.invalid --nqn $NQN
contains "$TMP/err" "'nosuch.invalid' is neither an IP address nor a name that resolves"
expect 2 env PATH="$P" "$SPARKCTL" storage connect -H localhost --json --target 127.0.0.1 --nqn $NQN
contains "$TMP/err" "--json is this node's connection"
# A node that cannot be reached (RFC 2606): its line says so, exit 3.
expect 3 env PATH="$P" "$SPARKCTL" storage disconnect -H localhost,nosuch.invalid --nqn $NQN
contains "$TMP/out" "localhost: $NQN: not connected"
contains "$TMP/out" "nosuch.invalid: failed:"
