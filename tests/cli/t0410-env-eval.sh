#!/usr/bin/env bash
# 'env --format sh' evaluated by real shells gives back every value byte for byte.
. "$SRCDIR/tests/lib.sh"

cd "$SRCDIR"
nasty=$'a b  "q" \'s\' $HOME `id` \\n \\ ; & | * ? [x] ~ é\ttab'
"$SPARKCTL" env --root tests/fixtures/spark-1cable --set "X_NASTY=$nasty" --set "X_EMPTY=" \
  --set "X_NEWLINE=line1
line2" --set "X_QUOTES=''''" > "$TMP/env.sh"

for sh in bash dash sh; do
  command -v "$sh" > /dev/null || continue
  "$sh" -c '. "$1"; printf "%s\0" "$X_NASTY" "$X_EMPTY" "$X_NEWLINE" "$X_QUOTES" "$NCCL_IB_HCA"' _ "$TMP/env.sh" > "$TMP/got"
  printf '%s\0' "$nasty" "" $'line1\nline2' "''''" "=rocep1s0f1,roceP2p1s0f1" > "$TMP/want"
  cmp "$TMP/got" "$TMP/want" || fail "$sh did not reproduce the values"
done

# The env format refuses what docker and systemd would read differently.
expect 1 "$SPARKCTL" env --root tests/fixtures/spark-1cable --format env --set 'X=a"b'
contains "$TMP/err" "X: the value cannot be written in --format env"
expect 0 "$SPARKCTL" env --root tests/fixtures/spark-1cable --format env --set 'X=a b'
contains "$TMP/out" "X=a b"

# The docker format is shell words: splitting it gives -e KEY=VALUE pairs.
"$SPARKCTL" env --root tests/fixtures/spark-1cable --format docker --set "X_NASTY=$nasty" > "$TMP/docker"
eval "set -- $(cat "$TMP/docker")"
found=""
while [ $# -gt 0 ]; do
  [ "$1" = -e ] || fail "expected -e, got '$1'"
  case $2 in X_NASTY=*) found=${2#X_NASTY=} ;; esac
  shift 2
done
[ "$found" = "$nasty" ] || fail "docker format lost the value"

# JSON: the same values.
"$SPARKCTL" env --root tests/fixtures/spark-1cable --format json --set "X_NASTY=$nasty" > "$TMP/env.json"
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["variables"]["X_NASTY"], end="")' "$TMP/env.json" > "$TMP/jv"
printf '%s' "$nasty" | cmp - "$TMP/jv" || fail "json value differs"
