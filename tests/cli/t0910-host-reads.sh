#!/usr/bin/env bash
# Only probe/ reads the host: outside src/probe/ (and lib/rootfs.c, which
# opens what the readers ask for) no code names a path of sysfs or procfs -
# no string literal "sys/...", "/sys/...", "proc/...", "/proc/..." (or
# "/sys", "/proc") for rootfs_*(), open(), fopen(), opendir(), realpath()
# and the like.  Comments, messages (text with spaces) and #include lines
# are not paths.  HOST_READS_SRC checks another tree's src/.
. "$SRCDIR/tests/lib.sh"

src=${HOST_READS_SRC:-$SRCDIR/src}
[ -d "$src/probe" ] || fail "no $src/probe"
python3 - "$src" > "$TMP/found" << 'PY'
import os, re, sys

src = sys.argv[1]
# A literal that is a path below sys or proc, relative or absolute.
path = re.compile(r'^/?(sys|proc)(/[^ ]*)?$')
# Comments, string and character literals, in the order they start.
token = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)

for dirpath, _, files in os.walk(src):
    for name in sorted(files):
        if not name.endswith((".c", ".h")):
            continue
        file = os.path.join(dirpath, name)
        rel = os.path.relpath(file, src)
        if rel.startswith("probe" + os.sep) or rel == os.path.join("lib", "rootfs.c"):
            continue
        text = open(file, encoding="utf-8", errors="replace").read()
        for m in token.finditer(text):
            lit = m.group(0)
            if not lit.startswith('"'):
                continue
            line_start = text.rfind("\n", 0, m.start()) + 1
            line = text[line_start:text.find("\n", m.start())]
            if re.match(r'\s*#\s*include\b', line):
                continue
            if path.match(lit[1:-1]):
                print("src/%s:%d: %s" % (rel, text.count("\n", 0, m.start()) + 1, line.strip()))
PY
if [ -s "$TMP/found" ]; then
  cat "$TMP/found" >&2
  fail "host paths outside src/probe/: read them through a reader of probe/ (probe/reader.h)"
fi
