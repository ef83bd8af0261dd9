# tests/discover/avahi.sh - a real avahi-daemon in a network namespace, for
# the tests of discover and join.  Sourced after tests/lib.sh and
# tests/netns/netns.sh (wait_until); skips (or fails, with
# SPARKCTL_REQUIRE_ROOT_TESTS=1) without avahi-daemon.
#
# avahi-daemon runs under its own mount namespace, with a private /run and a
# private /etc/avahi/services (a directory of the test bound over it), so
# nothing of this host's avahi is read or changed.

command -v avahi-daemon > /dev/null 2>&1 || {
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "no avahi-daemon (apt-get install avahi-daemon)"
  skip "no avahi-daemon"
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
