#!/usr/bin/env bash
# sparkctl exporter under abuse (tests/exporter/abuse.py): 10 000 malformed
# requests, oversized request lines and headers, slow clients, a burst of
# connections, other methods and paths.  It keeps serving exact metrics,
# drops what it must, and its resident memory stays flat.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"

R=$TMP/spark
fixture_copy spark-1cable "$R"
# A small quarantine, so that AddressSanitizer's own holding of freed memory
# does not pass for growth (no effect without it).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1" \
  LD_LIBRARY_PATH=$FAKE_LIBDIR SPARKCTL_FAKE_GPU=gb10 \
  exporter_start --root "$R" --idle-timeout 2 --max-per-ip 8 --max-connections 32
port=${EXPORTER_URL##*:}
python3 "$SRCDIR/tests/exporter/abuse.py" "$port" "$EXPORTER_PID" \
  'sparkctl_rdma_port_data_transmitted_bytes_total{device="rocep1s0f1",port="1"} 733902439248' \
  8 2 || fail "the exporter did not stand the abuse"
exporter_stop
