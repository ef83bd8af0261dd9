#!/usr/bin/env bash
# sparkctl configures and builds with none of the test suite's own packages:
# here without cmocka, which only the tests need. The build sees a copy of
# the system's pkg-config directories less cmocka.pc, and no CMake (meson
# would find cmocka's CMake files instead). Configured as the README says
# (no options), the program builds and runs; with -Dtests=true the
# configuration stops with a message that names cmocka.
. "$SRCDIR/tests/lib.sh"

command -v meson > /dev/null || skip "no meson"
command -v ninja > /dev/null || skip "no ninja"
command -v pkg-config > /dev/null || skip "no pkg-config"

# The search path pkg-config would use, with the .pc files of each directory
# linked into one, the first of a name winning as in pkg-config.
pcdir=$TMP/pkgconfig
mkdir "$pcdir"
search_path=${PKG_CONFIG_PATH:+$PKG_CONFIG_PATH:}${PKG_CONFIG_LIBDIR:-$(pkg-config --variable pc_path pkg-config)}
IFS=: read -r -a search_dirs <<< "$search_path"
for dir in "${search_dirs[@]}"; do
  for pc in "$dir"/*.pc; do
    [ -e "$pc" ] || continue
    name=${pc##*/}
    [ "$name" != cmocka.pc ] || continue
    [ -e "$pcdir/$name" ] || ln -s "$pc" "$pcdir/$name"
  done
done
export PKG_CONFIG_LIBDIR=$pcdir PKG_CONFIG_PATH=
pkg-config --exists jansson || fail "the copied pkg-config directory has no jansson.pc"
! pkg-config --exists cmocka || fail "cmocka is still visible to pkg-config"

# A CMake that cannot run: meson then finds nothing through CMake.
printf "[binaries]\ncmake = 'false'\n" > "$TMP/native.ini"

# The default configuration: no test suite, nothing that needs cmocka.
expect 0 meson setup --native-file "$TMP/native.ini" "$TMP/build" "$SRCDIR"
contains "$TMP/out" "Run-time dependency jansson found: YES"
lacks "$TMP/out" "cmocka"
expect 0 meson introspect --tests "$TMP/build"
[ "$(cat "$TMP/out")" = "[]" ] || fail "the default configuration has tests: $(head -c 300 "$TMP/out")"
expect 0 ninja -C "$TMP/build"
[ -x "$TMP/build/sparkctl" ] || fail "ninja built no sparkctl"

expect 0 "$TMP/build/sparkctl" --version
grep -Eq '^sparkctl [0-9]+\.[0-9]+\.[0-9]+ ' "$TMP/out" || fail "bad version line: $(cat "$TMP/out")"
expect 0 "$TMP/build/sparkctl" topo --root "$FIXTURES/spark-1cable"
cp "$TMP/out" "$TMP/topo-without-tests"
expect 0 "$SPARKCTL" topo --root "$FIXTURES/spark-1cable"
same "$TMP/out" "$TMP/topo-without-tests"

# The test suite asked for, without cmocka: a message that names it.
expect 1 meson setup --native-file "$TMP/native.ini" -Dtests=true "$TMP/build-tests" "$SRCDIR"
contains "$TMP/out" "needs cmocka (Debian: apt-get install libcmocka-dev)"
