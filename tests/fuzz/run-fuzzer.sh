#!/bin/sh
# run-fuzzer.sh FUZZER CORPUS ARTIFACTS [OPTION...] - run one libFuzzer target
# as a test.
#
# Fuzzes for $SPARKCTL_FUZZ_SECONDS seconds (default 30), starting from a copy
# of the seed corpus directory CORPUS in a temporary directory: libFuzzer adds
# the inputs it finds to its corpus, and the source tree must stay untouched.
# SPARKCTL_FUZZ_SECONDS=0 only replays the seed corpus.  OPTIONs go to
# libFuzzer (-dict=FILE).
#
# A crash, sanitizer report, leak, timeout (10 s for one input) or an input
# that needs more than 2 GiB fails the test; the input is saved in ARTIFACTS
# and printed in base64.  Exit status: 0 passed, 1 failed (never 77, which
# meson would count as skipped and libFuzzer uses for its findings).
set -eu

if [ $# -lt 3 ]; then
  echo "usage: run-fuzzer.sh FUZZER CORPUS ARTIFACTS [OPTION...]" >&2
  exit 1
fi
fuzzer=$1
corpus=$2
artifacts=$3
shift 3

seconds=${SPARKCTL_FUZZ_SECONDS:-30}
case $seconds in
'' | *[!0-9]*)
  echo "run-fuzzer.sh: SPARKCTL_FUZZ_SECONDS must be a number of seconds, not '$seconds'" >&2
  exit 1
  ;;
esac
# meson's timeout for this test was fixed when the build was configured.
budget=${SPARKCTL_FUZZ_CONFIGURED_SECONDS:-}
if [ -n "$budget" ] && [ "$seconds" -gt "$budget" ]; then
  echo "run-fuzzer.sh: note: this build was configured for ${budget} s of fuzzing;" \
    "meson may stop a ${seconds} s run (reconfigure with SPARKCTL_FUZZ_SECONDS=$seconds" \
    "in the environment, or pass --timeout-multiplier to meson test)" >&2
fi

[ -d "$corpus" ] || {
  echo "run-fuzzer.sh: no seed corpus at $corpus" >&2
  exit 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sparkctl-fuzz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/corpus" "$artifacts"
cp -R "$corpus/." "$tmp/corpus/"
# Mark the start, so that only this run's findings are reported below.
touch "$tmp/start"

# UBSan only prints by default; a finding must stop the fuzzer to be saved.
# Settings given in the environment come later, so they win.
UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ASAN_OPTIONS="detect_leaks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS ASAN_OPTIONS

if [ "$seconds" = 0 ]; then
  mode="-runs=0"
else
  mode="-max_total_time=$seconds"
fi
rc=0
"$fuzzer" "$mode" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$@" "$tmp/corpus" || rc=$?

if [ $rc != 0 ]; then
  echo "run-fuzzer.sh: $(basename "$fuzzer") failed (exit status $rc)" >&2
  find "$artifacts" -type f -newer "$tmp/start" | while read -r f; do
    echo "run-fuzzer.sh: input saved as $f ($(wc -c < "$f") bytes), base64:" >&2
    head -c 4096 "$f" | base64 >&2
  done
  exit 1
fi
exit 0
