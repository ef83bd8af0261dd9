# tests/discover/discover.sh - sourced by the discover tests after
# tests/lib.sh and tests/netns/netns.sh.
#
# A hub namespace holds bridges; each node namespace joins them by veths.
# avahi-daemon runs in a node as tests/discover/avahi.sh starts it.

. "$SRCDIR/tests/discover/avahi.sh"

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
