# tests/discover/discover.sh - sourced by the discover tests after
# tests/lib.sh and tests/netns/netns.sh.
#
# A hub namespace holds bridges; each node namespace joins them by veths.
# avahi-daemon runs in a node under its own mount namespace, with a
# private /run and a private /etc/avahi/services (a directory of the test
# bound over it), so nothing of this host's avahi is read or changed.

command -v avahi-daemon > /dev/null 2>&1 || {
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "no avahi-daemon (apt-get install avahi-daemon)"
  skip "no avahi-daemon"
}

new_ns HUB hub

# bridge NAME: a bridge in the hub.
bridge() {
  ip -n "$HUB" link add "$1" type bridge || fail "cannot create bridge $1"
  ip -n "$HUB" link set "$1" up
}

# plug NS DEV BRIDGE CIDR: a veth from NS (named DEV) to BRIDGE of the hub, DEV with CIDR.
plug() {
  local peer="h$(printf '%s' "$1$2" | md5sum | cut -c1-10)"
  ip -n "$HUB" link add "$peer" type veth peer name "$2" netns "$1" || fail "cannot create veth $2"
  ip -n "$HUB" link set "$peer" master "$3" up
  ip -n "$1" address add "$4" dev "$2"
  ip -n "$1" link set "$2" up
  wait_until 10 "$2 in $1 to be up" link_ready "$1" "$2"
}

# start_avahi NS HOSTNAME IFACES SERVICES_DIR: avahi-daemon of NS, as HOSTNAME on
# IFACES (comma separated), publishing the files of SERVICES_DIR; its log
# in $TMP/avahi-NS.log.  Returns once it has registered its services.
start_avahi() {
  local ns=$1 name=$2 ifaces=$3 dir=$4 conf="$TMP/avahi-$1.conf" log="$TMP/avahi-$1.log"
  cat > "$conf" <<CONF
[server]
host-name=$name
use-ipv4=yes
use-ipv6=no
allow-interfaces=$ifaces
enable-dbus=no
ratelimit-interval-usec=0
[wide-area]
enable-wide-area=no
[publish]
publish-addresses=yes
publish-workstation=no
publish-hinfo=no
[reflector]
[rlimits]
CONF
  ip netns exec "$ns" unshare -m sh -c '
    mount --make-rprivate / &&
    mount -t tmpfs tmpfs /run && mkdir -p /run/avahi-daemon &&
    mount --bind "$1" /etc/avahi/services &&
    exec avahi-daemon --no-chroot --no-drop-root --no-rlimits -f "$2"' sh "$dir" "$conf" \
    > "$log" 2>&1 &
  local pid=$!
  at_exit "kill_child $pid"
  # avahi probes its names for about a second, then registers the services:
  # wait for that, bounded, rather than for a guessed time.
  local want
  want=$(find "$dir" -name '*.service' | wc -l)
  wait_until 30 "avahi-daemon of $name to start" grep -q "Server startup complete" "$log"
  wait_until 30 "avahi-daemon of $name to publish $want services" \
    sh -c '[ "$(grep -c "successfully established" "$1")" -ge "$2" ]' sh "$log" "$want"
}
