#!/usr/bin/env bash
# sparkctl publish below a --root tree: the node id made once (0644), the
# service file written atomically (0644) and only when it changes, --dry-run
# writing nothing, --remove, a node-id file that is not an id left alone,
# and writing below / refused without root.
. "$SRCDIR/tests/lib.sh"

R=$TMP/root
mkdir -p "$R"
svc=$R/etc/avahi/services/sparkctl.service

# --dry-run: the file on stdout, nothing written (not even the id).
expect 0 "$SPARKCTL" publish --root "$R" --dry-run
contains "$TMP/out" "<type>_sparkctl._tcp</type>"
contains "$TMP/out" "<txt-record>id=NEW-NODE-ID</txt-record>"
contains "$TMP/err" "no /etc/sparkctl/node-id yet"
[ ! -e "$R/etc/sparkctl/node-id" ] || fail "--dry-run made a node id"
[ ! -e "$svc" ] || fail "--dry-run wrote the service file"

expect 0 "$SPARKCTL" publish --root "$R"
contains "$TMP/out" "wrote $svc"
contains "$TMP/out" "avahi-daemon notices it"
id=$(cat "$R/etc/sparkctl/node-id")
printf '%s\n' "$id" | grep -qxE '[0-9a-f]{32}' || fail "node id '$id' is not 32 hex characters"
[ "$(stat -c %a "$R/etc/sparkctl/node-id")" = 644 ] || fail "node-id is not 0644"
[ "$(stat -c %a "$svc")" = 644 ] || fail "the service file is not 0644"
contains "$svc" "<txt-record>id=$id</txt-record>"
contains "$svc" "<txt-record>ver="
/usr/bin/python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$svc" \
  || fail "the service file is not well-formed XML"

# Again: unchanged, same id, file untouched.
ino=$(stat -c %i "$svc")
expect 0 "$SPARKCTL" publish --root "$R"
contains "$TMP/out" "$svc unchanged"
[ "$(cat "$R/etc/sparkctl/node-id")" = "$id" ] || fail "the node id changed"
[ "$(stat -c %i "$svc")" = "$ino" ] || fail "an unchanged file was rewritten"

# --dry-run now shows the real id.
expect 0 "$SPARKCTL" publish --root "$R" --dry-run
contains "$TMP/out" "<txt-record>id=$id</txt-record>"

# --remove, twice.
expect 0 "$SPARKCTL" publish --root "$R" --remove --dry-run
contains "$TMP/out" "would remove $svc"
[ -e "$svc" ] || fail "--remove --dry-run removed the file"
expect 0 "$SPARKCTL" publish --root "$R" --remove
contains "$TMP/out" "removed $svc"
[ ! -e "$svc" ] || fail "--remove left the file"
expect 0 "$SPARKCTL" publish --root "$R" --remove
contains "$TMP/out" "nothing to remove"

# A node-id file that is not an id: refused, left as it was, nothing written.
printf 'not-an-id\n' > "$R/etc/sparkctl/node-id"
expect 1 "$SPARKCTL" publish --root "$R"
contains "$TMP/err" "does not hold a node id"
[ "$(cat "$R/etc/sparkctl/node-id")" = not-an-id ] || fail "the bad node-id was changed"
[ ! -e "$svc" ] || fail "a service file was written without an id"

# Bad options: exit 2.
expect 2 "$SPARKCTL" publish --frobnicate
expect 2 "$SPARKCTL" publish extra

# Below / without root: refused before anything is read or written.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null 2>&1; then
  expect 1 setpriv --reuid=65534 --regid=65534 --clear-groups env -u SPARKCTL_ROOT "$SPARKCTL" publish
  contains "$TMP/err" "needs root"
elif [ "$(id -u)" != 0 ]; then
  expect 1 env -u SPARKCTL_ROOT "$SPARKCTL" publish
  contains "$TMP/err" "needs root"
fi
