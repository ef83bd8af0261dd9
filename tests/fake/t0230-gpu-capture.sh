#!/usr/bin/env bash
# A capture holds the GPUs and NCCL as the live probe saw them, and replays
# them without any NVIDIA library.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/fake/lib-fake.sh"

# same_json EXPR FILE1 FILE2: EXPR ('d["gpu"]') is the same in both documents.
same_json() {
  python3 -c '
import json, sys
expr, a, b = sys.argv[1:]
x = eval(expr, {"d": json.load(open(a))})
y = eval(expr, {"d": json.load(open(b))})
if x != y:
    print(json.dumps(x, indent=1), json.dumps(y, indent=1), sep="\n---\n", file=sys.stderr)
    sys.exit(1)
' "$1" "$2" "$3" || fail "$1 differs between $2 and $3"
}

# live ARGS...: sparkctl on the stand-ins, posing as $profile; the NCCL
# version is one no host's own NCCL has, to tell a replay from a new probe.
live() {
  fake "$profile" env SPARKCTL_FAKE_NCCL_VERSION=2708 "$SPARKCTL" "$@"
}

for profile in h100x8 nvml-init-fails; do
  note "profile $profile"
  expect 0 live topo --json
  quiet
  cp "$TMP/out" "$TMP/live.json"
  expect 0 live topo
  quiet
  gpu_table "$TMP/out" "$TMP/live.txt"
  cap=$TMP/capture-$profile
  expect 0 live capture "$cap"
  contains "$TMP/err" "sparkctl capture: wrote"
  same_json 'd["gpu"]' "$TMP/live.json" "$cap/.sparkctl/inventory.json"

  # The replay loads nothing: neither with no library on the loader path...
  expect 0 env LD_LIBRARY_PATH="$NO_LIBDIR" "$SPARKCTL" topo --root "$cap" --json
  quiet
  cp "$TMP/out" "$TMP/replay.json"
  json_check "$TMP/replay.json" << EOF
d["source"] => root
d["system"]["nccl"]["version"] => 2.7.8
EOF
  same_json 'd["gpu"]' "$TMP/live.json" "$TMP/replay.json"
  same_json 'd["system"]["nccl"]' "$TMP/live.json" "$TMP/replay.json"
  expect 0 env LD_LIBRARY_PATH="$NO_LIBDIR" "$SPARKCTL" topo --root "$cap"
  quiet
  gpu_table "$TMP/out" "$TMP/replay.txt"
  same "$TMP/live.txt" "$TMP/replay.txt"

  # ... nor with the stand-ins there, describing another machine.
  expect 0 fake gb10 "$SPARKCTL" topo --root "$cap" --json
  quiet
  same_json 'd["gpu"]' "$TMP/live.json" "$TMP/out"
  same_json 'd["system"]["nccl"]' "$TMP/live.json" "$TMP/out"
done
