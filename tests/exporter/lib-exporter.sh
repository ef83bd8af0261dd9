# tests/exporter/lib-exporter.sh - sourced by the exporter tests, after
# tests/lib.sh.  The tests get the directory of the stand-in NVIDIA
# libraries as their first argument (tests/exporter/meson.build).
#
# Every exporter listens on 127.0.0.1 port 0 (a free port the kernel picks,
# which it prints) and is stopped when the test ends, however it ends.

FAKE_LIBDIR=${1:?usage: TEST FAKE_LIBDIR (meson test passes it)}
[ -f "$FAKE_LIBDIR/libnvidia-ml.so.1" ] || fail "no libnvidia-ml.so.1 in $FAKE_LIBDIR"
unset SPARKCTL_FAKE_GPU SPARKCTL_FAKE_XID_FILE SPARKCTL_ROOT
HTTP="python3 $SRCDIR/tests/exporter/http_client.py"

# fixture_copy NAME DIR: a writable copy of tests/fixtures/NAME at DIR, with
# what the exporter reads that the probe does not: netdev statistics, a
# thermal zone and a hwmon chip.
fixture_copy() {
  cp -a "$FIXTURES/$1" "$2"
  local d
  for d in "$2"/sys/class/net/*; do
    mkdir -p "$d/statistics"
    for f in rx_bytes tx_bytes rx_packets tx_packets rx_errors tx_errors rx_dropped tx_dropped; do
      echo 0 > "$d/statistics/$f"
    done
  done
  mkdir -p "$2/sys/class/thermal/thermal_zone0" "$2/sys/class/hwmon/hwmon0"
  echo acpitz > "$2/sys/class/thermal/thermal_zone0/type"
  echo 41000 > "$2/sys/class/thermal/thermal_zone0/temp"
  echo nvme > "$2/sys/class/hwmon/hwmon0/name"
  echo 38850 > "$2/sys/class/hwmon/hwmon0/temp1_input"
  echo Composite > "$2/sys/class/hwmon/hwmon0/temp1_label"
}

# exporter_start ARGS...: start 'sparkctl exporter --listen 127.0.0.1:0 ARGS'
# in the background (with the caller's environment); sets EXPORTER_PID and
# EXPORTER_URL (http://127.0.0.1:PORT, or https:// with TLS).  Its stderr goes
# to $EXPORTER_ERR ($TMP/exporter-N.err).
_exporters=0
exporter_start() {
  local i url=""
  _exporters=$((_exporters + 1))
  EXPORTER_ERR=$TMP/exporter-$_exporters.err
  # The background job opens the file itself, maybe after the first look
  # below (sed on a missing file exits 2, which ended the test): make it now.
  : > "$EXPORTER_ERR"
  "$SPARKCTL" exporter --listen 127.0.0.1:0 "$@" 2> "$EXPORTER_ERR" &
  EXPORTER_PID=$!
  # Stopped at the end only if the test did not wait for it: its PID may be
  # another process's by then.
  at_exit "kill_child $EXPORTER_PID"
  for i in $(seq 200); do
    url=$(sed -n 's|^sparkctl exporter: serving \(https\{0,1\}://[0-9.:]*\)/metrics$|\1|p' "$EXPORTER_ERR")
    [ -z "$url" ] || break
    kill -0 "$EXPORTER_PID" 2> /dev/null || { cat "$EXPORTER_ERR" >&2; fail "the exporter exited"; }
    sleep 0.05
  done
  [ -n "$url" ] || { cat "$EXPORTER_ERR" >&2; fail "the exporter did not start listening"; }
  EXPORTER_URL=$url
}

# exporter_stop: SIGTERM; it must exit 0 at once and have printed nothing else.
exporter_stop() {
  local rc=0
  kill -TERM "$EXPORTER_PID"
  wait "$EXPORTER_PID" || rc=$?
  [ "$rc" = 0 ] || { cat "$EXPORTER_ERR" >&2; fail "the exporter exited $rc on SIGTERM"; }
  [ "$(grep -cv '^sparkctl exporter: serving ' "$EXPORTER_ERR")" = 0 ] ||
    { cat "$EXPORTER_ERR" >&2; fail "the exporter wrote to stderr"; }
}

# scrape FILE: GET /metrics into FILE (status 200 and the content type required).
scrape() {
  $HTTP get "$EXPORTER_URL/metrics" > "$1.raw" || fail "GET /metrics failed"
  head -n 1 "$1.raw" | grep -qx '200' || { cat "$1.raw" >&2; fail "GET /metrics: not 200"; }
  grep -qx 'content-type: text/plain; version=0.0.4; charset=utf-8' "$1.raw" ||
    { head -n 10 "$1.raw" >&2; fail "GET /metrics: wrong content type"; }
  sed '1,/^$/d' "$1.raw" > "$1"
}

# have_samples FILE: each line of stdin is a sample line that FILE holds exactly.
have_samples() {
  local line bad=0
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    grep -qxF -- "$line" "$1" || { echo "missing: $line" >&2; bad=1; }
  done
  [ "$bad" = 0 ] || { grep -v '^#' "$1" | head -n 40 >&2; fail "samples missing from $1"; }
}

# promlint FILE: promtool check metrics passes on FILE (lint problems included).
promlint() {
  promtool check metrics < "$1" > "$TMP/promtool.out" 2>&1 ||
    { cat "$TMP/promtool.out" >&2; fail "promtool check metrics failed on $1"; }
}

# make_web_config DIR: in DIR, a self-signed certificate for 127.0.0.1 (cert.pem,
# key.pem) and web.yml with TLS and two users: alice (password "s3cret", a
# $2y$ hash as htpasswd makes them) and bob ("other pass", $2b$).
make_web_config() {
  mkdir -p "$1"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$1/key.pem" -out "$1/cert.pem" > "$TMP/openssl.out" 2>&1 ||
    { cat "$TMP/openssl.out" >&2; fail "openssl could not make a certificate"; }
  chmod 600 "$1/key.pem"
  # Made with libcrypt's crypt(); costs 4 and 5 keep the tests quick.
  cat > "$1/web.yml" << 'EOF'
tls_server_config:
  cert_file: cert.pem
  key_file: key.pem
basic_auth_users:
  alice: $2y$04$SparkctlTestSaltOfThe...lbex/mQmobWUBEwdsbNRmYp2oqb1i
  bob: $2b$05$AnotherSaltForTheTeste88eyDDSiy3c/KlveScOjZ9XuWH89ooa
EOF
}

require_prometheus() {
  if ! command -v promtool > /dev/null 2>&1 || ! command -v prometheus > /dev/null 2>&1; then
    [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "prometheus and promtool are not installed"
    skip "prometheus and promtool are not installed (Debian package prometheus)"
  fi
}
