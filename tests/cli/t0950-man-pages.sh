#!/usr/bin/env bash
# The manual pages: one for sparkctl and for each command and verb (the
# build's list, man/meson.build, names every one the program lists), each
# rendered by groff without a warning, each page's OPTIONS exactly the
# options of the command's --help, and 'man' reads them.
. "$SRCDIR/tests/lib.sh"
command -v groff > /dev/null || fail "groff is missing (Debian: groff-base)"

# --help's options: "-H, --hosts HOST,..." for each, one a line.  The
# help text starts in column 25, or on the next line after a longer one.
help_options() {
  sed -n '/^options:$/,/^$/p' "$1" | awk '
    { line[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) {
        if (line[i] !~ /^  (-[^-]|    --)/) continue
        l = substr(line[i + 1], 1, 24) == sprintf("%24s", "") ? line[i] : substr(line[i], 1, 24)
        sub(/^ +/, "", l); sub(/ +$/, "", l); print l
      }
    }' | sort
}
# The OPTIONS of a page (roff), the same way: the tag line of each .TP.
man_options() {
  sed -n '/^\.SH OPTIONS$/,/^\.SH /p' "$1" | sed -n '/^\.TP$/{n;p}' |
    sed -E 's/\\f[BIR]//g; s/\\-/-/g' | sort
}
render() { # PAGE OUT: warnings of groff fail the test
  LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$1" 2> "$TMP/warnings"
  [ ! -s "$TMP/warnings" ] || { cat "$TMP/warnings" >&2; fail "groff warns on $1"; }
  LC_ALL=C groff -man -Tascii -P-cbou "$1" > "$2" 2> "$TMP/warnings"
  [ ! -s "$TMP/warnings" ] || { cat "$TMP/warnings" >&2; fail "groff warns on $1"; }
}

# The pages of the build are those of the commands and verbs sparkctl lists.
expect 0 "$SPARKCTL" --help
commands=$(sed -n '/^commands:$/,/^$/p' "$TMP/out" | awk 'NF > 1 { print $1 }')
want="sparkctl"
for c in $commands; do
  want="$want sparkctl-$c"
  expect 0 "$SPARKCTL" "$c" --help
  if grep -q "^'sparkctl $c [A-Z]* --help' tells more" "$TMP/out"; then
    for v in $(sed -n '/^$/,$p' "$TMP/out" | awk '/^  [a-z]/ { print $1 }'); do
      want="$want sparkctl-$c-$v"
    done
  fi
done
listed=$(grep -oE "^ *\[('[a-z]+'(, *)?)*\]," "$SRCDIR/man/meson.build" |
  sed -E "s/[][ ,]+/ /g; s/'//g; s/^ *//; s/ *$//" |
  while read -r words; do echo "sparkctl${words:+-${words// /-}}"; done)
[ "$(echo "$want" | tr ' ' '\n' | sort)" = "$(echo "$listed" | sort)" ] ||
  fail "man/meson.build lists: $(echo $listed); sparkctl has: $want"
echo "$want" | grep -q "sparkctl-bench-nccl" || fail "no verbs found ($want)"
[ "$(echo "$want" | wc -w)" -ge 15 ] || fail "too few commands found: $want"
lacks <(echo "$want") agent

# Each page renders cleanly and lists the options of --help.
pages=0
for page in $want; do
  words=${page#sparkctl}
  words=${words//-/ }
  # shellcheck disable=SC2086
  expect 0 "$SPARKCTL" help --man $words
  cp "$TMP/out" "$TMP/$page.1"
  if [ -n "$BUILDDIR" ] && [ -f "$BUILDDIR/man/$page.1" ]; then
    cmp -s "$BUILDDIR/man/$page.1" "$TMP/$page.1" || fail "build's $page.1 is not the program's"
  fi
  render "$TMP/$page.1" "$TMP/$page.txt"
  contains "$TMP/$page.txt" "NAME"
  grep -qE "^       $page +- " "$TMP/$page.txt" || fail "$page: no NAME line"
  contains "$TMP/$page.txt" "SEE ALSO"
  [ "$page" = sparkctl ] && continue
  # shellcheck disable=SC2086
  expect 0 "$SPARKCTL" $words --help
  cp "$TMP/out" "$TMP/$page.help"
  if grep -q '^options:$' "$TMP/$page.help"; then
    help_options "$TMP/$page.help" > "$TMP/help-options"
    man_options "$TMP/$page.1" > "$TMP/man-options"
    [ -s "$TMP/help-options" ] || fail "$page: no options read from --help"
    diff -u "$TMP/help-options" "$TMP/man-options" >&2 ||
      fail "$page: OPTIONS is not what --help lists"
    grep -q '^Exit status:' "$TMP/$page.help" && contains "$TMP/$page.txt" "EXIT STATUS"
  fi
  pages=$((pages + 1))
done
[ $pages -ge 14 ] || fail "only $pages command pages"

# What a page shows: the verbs of bench, a renamed option not listed, the
# values of an option, special characters of roff as text.
contains "$TMP/sparkctl-bench.txt" "sparkctl-bench-nccl(1)"
lacks "$TMP/sparkctl-launch.txt" "--timeout "
contains "$TMP/sparkctl-launch.txt" "--job-timeout SECONDS"
contains "$TMP/sparkctl-netplan.txt" "  pair    two nodes"
grep -q "^       0 OK" "$TMP/sparkctl.txt" || fail "sparkctl(1) lists no exit statuses"
for code in $(grep -oE 'SPARKCTL_EXIT_[A-Z]+ = [0-9]+' "$SRCDIR/src/exitcode.h" | awk '{ print $3 }'); do
  grep -q "^       $code [A-Z]" "$TMP/sparkctl.txt" || fail "sparkctl(1) lacks exit status $code"
done
expect 2 "$SPARKCTL" help --man agent
expect 2 "$SPARKCTL" help --man bench nope
expect 2 "$SPARKCTL" help --man topo extra

# man reads the page as installed.
if command -v man > /dev/null; then
  MANPAGER=cat MANWIDTH=80 man -l "$TMP/sparkctl-doctor.1" > "$TMP/man.txt" 2> "$TMP/man.err" ||
    fail "man -l failed: $(cat "$TMP/man.err")"
  contains "$TMP/man.txt" "sparkctl-doctor"
fi
