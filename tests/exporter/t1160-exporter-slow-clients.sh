#!/usr/bin/env bash
# sparkctl exporter against slow and idle clients (tests/exporter/slow_clients.py):
# a request that trickles in is cut off at --request-timeout, however steadily
# it comes; slow clients that fill the scraper's own address and others, with
# hundreds of idle connections on top, do not keep scrapes from being answered;
# and every such connection ends closed by the exporter.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"

R=$TMP/spark
fixture_copy spark-1cable "$R"
# The idle timeout is far beyond the test's waits: only the deadline may close.
LD_LIBRARY_PATH=$FAKE_LIBDIR SPARKCTL_FAKE_GPU=gb10 \
  exporter_start --root "$R" --request-timeout 1 --idle-timeout 600 --max-per-ip 4 --max-connections 16
python3 "$SRCDIR/tests/exporter/slow_clients.py" "${EXPORTER_URL##*:}" \
  'sparkctl_rdma_port_data_transmitted_bytes_total{device="rocep1s0f1",port="1"} 733902439248' ||
  fail "slow clients kept the exporter from its scrapes"
exporter_stop
