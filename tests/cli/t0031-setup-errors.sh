#!/usr/bin/env bash
# scripts/setup says why a build failed: when meson or ninja fails it prints
# the end of their output and a line naming the step and the log, and exits
# 1; when they succeed they print nothing. It runs here as a copy in a small
# source tree of its own ('setup' works in the tree above its scripts/),
# whose meson.build fails to configure, then whose main.c fails to compile,
# then builds.
. "$SRCDIR/tests/lib.sh"

command -v meson > /dev/null || skip "no meson"
command -v ninja > /dev/null || skip "no ninja"
# 'setup example' installs what is missing of its build packages first
# (apt-get as root): run only where nothing is missing.
command -v dpkg-query > /dev/null || skip "no dpkg-query (not Debian)"
eval "$(grep '^BUILD_PKGS=' "$SRCDIR/scripts/setup")"
[ -n "${BUILD_PKGS:-}" ] || fail "no BUILD_PKGS line in scripts/setup"
for package in $BUILD_PKGS; do
  dpkg-query -W -f='${Status}' "$package" 2> /dev/null | grep -q "install ok installed" ||
    skip "build package $package is not installed"
done

tree=$TMP/tree
mkdir -p "$tree/scripts"
cp "$SRCDIR/scripts/setup" "$tree/scripts/setup"

# A configuration that fails: a dependency no system has.
cat > "$tree/meson.build" << 'EOF'
project('planted', 'c')
dependency('sparkctl-planted-missing-dependency')
EOF
expect 1 sh "$tree/scripts/setup" example
contains "$TMP/err" 'Dependency "sparkctl-planted-missing-dependency" not found'
contains "$TMP/err" "scripts/setup: 'meson setup build' failed (exit status 1); all its output is in build/setup-log.txt"
[ "$(tail -n 1 "$TMP/err")" = "scripts/setup: 'meson setup build' failed (exit status 1); all its output is in build/setup-log.txt" ] ||
  fail "the last line of stderr is not the one that says what failed"
contains "$tree/build/setup-log.txt" "The Meson build system"
lacks "$TMP/out" "== sparkctl topo"

# A program that does not compile: the compiler's error, not ninja's progress lines.
cat > "$tree/meson.build" << 'EOF'
project('planted', 'c')
executable('sparkctl', 'main.c')
EOF
printf '#error planted compile error\n' > "$tree/main.c"
expect 1 sh "$tree/scripts/setup" example
contains "$TMP/err" "#error planted compile error"
contains "$TMP/err" "FAILED: "
contains "$TMP/err" "scripts/setup: 'ninja -C build sparkctl' failed (exit status 1); all its output is in build/setup-log.txt"
! grep -q '^\[[0-9]*/[0-9]*\] ' "$TMP/err" || fail "ninja's progress lines reached the output"
lacks "$TMP/out" "== sparkctl topo"

# A build that works (a reconfiguration now): nothing of meson's or ninja's.
cat > "$tree/main.c" << 'EOF'
#include <stdio.h>
int main(int argc, char **argv)
{
	printf("planted sparkctl %s\n", argc > 1 ? argv[1] : "");
	return 0;
}
EOF
expect 0 sh "$tree/scripts/setup" example
contains "$TMP/out" "== sparkctl topo on a captured DGX Spark"
contains "$TMP/out" "planted sparkctl topo"
lacks "$TMP/out" "Meson"
lacks "$TMP/out" "ninja"
[ ! -s "$TMP/err" ] || fail "a build that works wrote to stderr: $(cat "$TMP/err")"
contains "$tree/build/setup-log.txt" "Linking target sparkctl"
