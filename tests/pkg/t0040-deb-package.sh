#!/usr/bin/env bash
# debian/: dpkg-buildpackage -us -uc -b builds sparkctl_VERSION_ARCH.deb from a
# copy of the source tree; the package holds everything 'meson install'
# installs (the binary, the exporter's unit, share/sparkctl/, the docs, and
# the man pages and completions), does not enable the unit, runs from a
# scratch root, and lintian finds no error in it.
. "$SRCDIR/tests/lib.sh"

missing=""
for tool in dpkg-buildpackage dpkg-deb dpkg-parsechangelog dh lintian; do
  command -v "$tool" > /dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  if [ "${SPARKCTL_REQUIRE_PKG:-}" = 1 ] || [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ]; then
    fail "missing:$missing (apt-get install debhelper dpkg-dev lintian), and this run requires the package test"
  fi
  skip "missing:$missing (apt-get install debhelper dpkg-dev lintian)"
fi

# The package's version is the project's.
project_version=$(sed -n "s/^  version: '\(.*\)',\$/\1/p" "$SRCDIR/meson.build")
[ -n "$project_version" ] || fail "no project version in meson.build"
package_version=$(dpkg-parsechangelog -l "$SRCDIR/debian/changelog" -S Version)
[ "$package_version" = "$project_version" ] ||
  fail "debian/changelog says $package_version, meson.build $project_version"

# The package builds from the packages a build needs (scripts/setup's
# BUILD_PKGS): each is one of its Build-Depends.
build_pkgs=$(sed -n 's/^BUILD_PKGS="\(.*\)"$/\1/p' "$SRCDIR/scripts/setup")
[ -n "$build_pkgs" ] || fail "no BUILD_PKGS in scripts/setup"
/usr/bin/python3 -c '
import re, sys
source = open(sys.argv[1]).read().split("\n\n")[0]
field = re.search(r"^Build-Depends:((?:.*\n?)(?:[ \t].*\n?)*)", source, re.M).group(1)
names = {re.split(r"[\s(\[<:]", d.strip())[0] for d in field.replace("\n", " ").split(",") if d.strip()}
missing = [p for p in sys.argv[2].split() if p not in names]
if missing:
    sys.exit("debian/control: Build-Depends lacks " + " ".join(missing))
' "$SRCDIR/debian/control" "$build_pkgs" || fail "debian/control's Build-Depends are not scripts/setup's BUILD_PKGS"

# Never in the source tree: a copy of what git tracks (and what it would
# track: new files not yet added), as a clone would have it.
src=$TMP/pkg/sparkctl
mkdir -p "$src"
if git -C "$SRCDIR" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  # A tracked file deleted in the work tree is not copied.
  # shellcheck disable=SC2016
  (cd "$SRCDIR" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh |
    tar --null -T - -cf -) | tar -C "$src" -xf -
else
  (cd "$SRCDIR" && tar --exclude='./build*' --exclude='./obj-*' -cf - .) | tar -C "$src" -xf -
fi

# The cheapest build that is still the package: two jobs, no dbgsym package.
# (The package build never builds or runs the test suite: -Dtests=false.)
run env -C "$src" DEB_BUILD_OPTIONS="parallel=2 nocheck noddebs" \
  dpkg-buildpackage -us -uc -b
if [ "$status" != 0 ]; then
  tail -n 40 "$TMP/out" "$TMP/err" >&2
  fail "dpkg-buildpackage exited $status"
fi
debs=("$TMP"/pkg/sparkctl_"$package_version"_*.deb)
if [ ${#debs[@]} != 1 ] || [ ! -f "${debs[0]}" ]; then
  fail "no single sparkctl_${package_version}_*.deb: $(ls "$TMP/pkg")"
fi
deb=${debs[0]}
note "built $(basename "$deb")"

# Its files, without the leading ".".
dpkg-deb -c "$deb" | awk '{ print substr($6, 2) }' > "$TMP/files"
has_file() {
  grep -qxF -- "$1" "$TMP/files" || grep -qxF -- "$1.gz" "$TMP/files" ||
    { cat "$TMP/files" >&2; fail "the package lacks $1"; }
}
has_file /usr/bin/sparkctl
has_file /lib/systemd/system/sparkctl-exporter.service
has_file /usr/share/sparkctl/sparkctl-dashboard.json
has_file /usr/share/sparkctl/sparkctl-alerts.yml
has_file /usr/share/sparkctl/prometheus.yml
has_file /usr/share/sparkctl/ddp_bench.py
has_file /usr/share/doc/sparkctl/copyright
has_file /usr/share/doc/sparkctl/README.md
for doc in "$src"/docs/*.md; do
  has_file "/usr/share/doc/sparkctl/$(basename "$doc")"
done

# Everything 'meson install' installs is in the package (the man pages and
# completions among them), the unit where Debian 12 keeps units.
builddir=$(echo "$src"/obj-*)
[ -d "$builddir" ] || fail "no meson build directory in the package build: $(ls "$src")"
meson introspect --installed "$builddir" > "$TMP/installed.json"
/usr/bin/python3 -c '
import json, sys
for path in sorted(json.load(open(sys.argv[1])).values()):
    print(path.replace("/usr/lib/systemd/system/", "/lib/systemd/system/"))
' "$TMP/installed.json" > "$TMP/meson-installed"
[ -s "$TMP/meson-installed" ] || fail "meson installs nothing?"
while read -r path; do
  has_file "$path"
done < "$TMP/meson-installed"
note "$(wc -l < "$TMP/meson-installed") files from meson install"

# The unit is installed, never enabled or started by the package: the only
# enable in its scripts is for a unit its administrator had enabled before.
dpkg-deb -e "$deb" "$TMP/control"
if [ -f "$TMP/control/postinst" ]; then
  lacks "$TMP/control/postinst" "deb-systemd-invoke"
  lacks "$TMP/control/postinst" "systemctl start"
  if grep -q "deb-systemd-helper enable" "$TMP/control/postinst"; then
    contains "$TMP/control/postinst" "if deb-systemd-helper debian-installed 'sparkctl-exporter.service'"
  fi
fi

# The package as installed: the binary runs from a scratch root, its unit
# names it, and it reads a node as the build's binary does.
root=$TMP/root
dpkg-deb -x "$deb" "$root"
expect 0 "$root/usr/bin/sparkctl" --version
grep -Eq "^sparkctl $project_version " "$TMP/out" || fail "version line: $(cat "$TMP/out")"
contains "$root/lib/systemd/system/sparkctl-exporter.service" "ExecStart=/usr/bin/sparkctl exporter"
expect 0 "$SPARKCTL" topo --root "$FIXTURES/spark-1cable"
cp "$TMP/out" "$TMP/topo-build"
expect 0 "$root/usr/bin/sparkctl" topo --root "$FIXTURES/spark-1cable"
contains "$TMP/out" "rocep1s0f0/1"
same "$TMP/topo-build" "$TMP/out"

# lintian: no error (warnings are shown, not failed on).
run lintian --no-tag-display-limit "$deb"
cat "$TMP/out"
if grep -q '^E: ' "$TMP/out"; then
  fail "lintian reports errors"
fi
# lintian itself must have run: a clean package still exits 0, a broken run not.
[ "$status" = 0 ] || [ "$status" = 2 ] || { cat "$TMP/err" >&2; fail "lintian exited $status"; }
