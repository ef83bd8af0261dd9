#!/usr/bin/env bash
# bench nccl says where a long sweep is on stderr when stderr is a
# terminal: "bench nccl: all_reduce 1 MiB, 18 of 18 sizes (N s)", drawn
# between two sizes once the run is over 2 s old, erased before each piece
# of the table, so that the table on the same terminal is intact.  Never
# with --json, never when stderr is not a terminal.  The stand-in NCCL keeps
# each collective's stream busy for 50 ms, so that a sweep of 18 sizes
# (4 waits a size with -n 1 -w 0 -c 0) lasts 3.6 s at the least: the line
# is due from the 11th size on, however fast or slow this machine is.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"
unset SPARKCTL_FAKE_NCCL_HANG_BYTES SPARKCTL_FAKE_NCCL_CORRUPT SPARKCTL_FAKE_NCCL_ASYNC_ERROR \
  SPARKCTL_FAKE_NCCL_NET SPARKCTL_FAKE_CUDA_FREE_MIB NCCL_DEBUG NCCL_DEBUG_FILE NCCL_DEBUG_SUBSYS \
  RANK WORLD_SIZE MASTER_ADDR MASTER_PORT LOCAL_RANK SPARKCTL_ROOT
export TMPDIR=$TMP
export SPARKCTL_FAKE_NCCL_BUSY_US=50000
sweep=(bench nccl -b 8 -e 1M -n 1 -w 0 -c 0)

# on_tty WHERE CMD...: run CMD with stderr on a pty, and stdout too when
# WHERE is "both" (else to $TMP/out); the terminal's bytes in $TMP/tty,
# the exit status in $TMP/status.
on_tty() {
  local where=$1
  shift
  local both=()
  [ "$where" = both ] && both=(--both)
  "$SRCDIR/tests/pty-run.py" "${both[@]}" "$TMP" "$@" || fail "on a terminal: $*"
  [ "$(cat "$TMP/status")" = 0 ] || { cat -A "$TMP/tty" >&2; fail "exit $(cat "$TMP/status"): $*"; }
}

# progress_ok: the terminal showed the line with the last size, redrawn in
# place and erased at the end.
progress_ok() {
  python3 - "$TMP/tty" << 'PY' || fail "the progress line is not as expected"
import sys
tty = open(sys.argv[1], "rb").read()
want = b"\rbench nccl: all_reduce 1 MiB, 18 of 18 sizes ("
i = tty.find(want)
if i < 0:
    sys.exit(f"no progress line {want!r} on the terminal: {tty!r}")
if b" s)\x1b[K" not in tty[i:]:
    sys.exit(f"no time in the progress line: {tty!r}")
last = tty.rfind(b"\rbench nccl: ")
if b"\r\x1b[K" not in tty[last:]:
    sys.exit(f"the progress line was not erased: {tty!r}")
PY
}

# screen FILE: the lines FILE shows on a terminal (a carriage return goes
# back to the first column, ESC [ K erases to the end of the line).
screen() {
  python3 - "$1" << 'PY'
import sys
data = open(sys.argv[1], "rb").read().replace(b"\r\n", b"\n")
for raw in data.split(b"\n"):
    line, col, k = bytearray(), 0, 0
    while k < len(raw):
        if raw.startswith(b"\x1b[K", k):
            del line[col:]
            k += 3
            continue
        c = raw[k]
        k += 1
        if c == 0x0D:
            col = 0
            continue
        if col < len(line):
            line[col] = c
        else:
            line.append(c)
        col += 1
    sys.stdout.write(line.decode() + "\n")
PY
}

# --- stderr on a terminal, stdout to a file: the line on the terminal, the
# table in the file without a byte of it.
on_tty err env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" "${sweep[@]}"
progress_ok
lacks "$TMP/out" "bench nccl:"
no_controls "$TMP/out"
[ "$(grep -vc '^#' "$TMP/out")" = 18 ] || fail "not 18 rows in the table"

# --- Both on the same terminal: the table as the terminal shows it is
# whole; no row holds a piece of the line.
on_tty both env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" "${sweep[@]}"
progress_ok
screen "$TMP/tty" > "$TMP/screen"
lacks "$TMP/screen" "bench nccl:"
grep -v '^#' "$TMP/screen" | grep -v '^$' > "$TMP/rows" || true
[ "$(wc -l < "$TMP/rows")" = 18 ] || { cat "$TMP/screen" >&2; fail "not 18 rows on the terminal"; }
grep -qvE '^ +[0-9]+ +[0-9]+ +float +sum +-1 ' "$TMP/rows" &&
  { cat "$TMP/screen" >&2; fail "a row on the terminal is not a row of the table"; }
grep -qE '^ +1048576 +262144 +float +sum +-1 ' "$TMP/rows" || fail "no 1 MiB row on the terminal"
contains "$TMP/screen" "# Collective test concluded: all_reduce_perf"

# --- Not with --json, even on a terminal.
on_tty err env LD_LIBRARY_PATH="$FAKE_LIBDIR" SPARKCTL_FAKE_GPU=gb10 "$SPARKCTL" "${sweep[@]}" --json
[ ! -s "$TMP/tty" ] || { cat -A "$TMP/tty" >&2; fail "--json wrote to the terminal"; }
json_valid bench-nccl "$TMP/out"

# --- Not when stderr is not a terminal.
fake gb10 "$SPARKCTL" "${sweep[@]}" > "$TMP/out" 2> "$TMP/err" || fail "bench nccl failed on a pipe"
quiet
[ "$(grep -vc '^#' "$TMP/out")" = 18 ] || fail "not 18 rows in the table"
