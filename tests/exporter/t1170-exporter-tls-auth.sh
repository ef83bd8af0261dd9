#!/usr/bin/env bash
# sparkctl exporter --web-config: TLS with a certificate made here (checked by
# a client that trusts only it) and HTTP basic authentication against bcrypt
# hashes ($2y$ and $2b$): the right password gets the metrics, a wrong one,
# an unknown user or none gets 401 with WWW-Authenticate; each part alone;
# and files it must refuse, each with one line and exit 1.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/exporter/lib-exporter.sh"
command -v openssl > /dev/null 2>&1 || {
  [ "${SPARKCTL_REQUIRE_ROOT_TESTS:-}" = 1 ] && fail "no openssl"
  skip "no openssl (Debian package openssl)"
}

R=$TMP/spark
fixture_copy spark-1cable "$R"
W=$TMP/web
make_web_config "$W"
LINE='sparkctl_rdma_port_data_transmitted_bytes_total{device="rocep1s0f1",port="1"} 733902439248'

# status FILE: the status code a response file of http_client.py starts with.
status() { head -n 1 "$1"; }
# unauthorized FILE: 401 and the challenge of basic authentication.
unauthorized() {
  [ "$(status "$1")" = 401 ] || { cat "$1" >&2; fail "not 401"; }
  contains "$1" 'www-authenticate: Basic realm="sparkctl exporter"'
  lacks "$1" "$LINE"
}

# --- TLS and users.
exporter_start --no-gpu --root "$R" --web-config "$W/web.yml"
case $EXPORTER_URL in https://127.0.0.1:*) ;; *) fail "not served over https: $EXPORTER_URL" ;; esac
TLS="$HTTP --cacert $W/cert.pem"
for user in "alice:s3cret" "bob:other pass" "alice:s3cret"; do
  $TLS --user "$user" get "$EXPORTER_URL/metrics" > "$TMP/ok" || fail "no answer for $user"
  [ "$(status "$TMP/ok")" = 200 ] || { cat "$TMP/ok" >&2; fail "$user: not 200"; }
  contains "$TMP/ok" "$LINE"
done
# After a right password, a wrong one is still refused (what is remembered is
# the password, not the user).
for user in "alice:wrong" "alice:" "alice:s3cret " "bob:s3cret" "carol:s3cret" "Alice:s3cret"; do
  $TLS --user "$user" get "$EXPORTER_URL/metrics" > "$TMP/no" || fail "no answer for $user"
  unauthorized "$TMP/no"
done
$TLS get "$EXPORTER_URL/metrics" > "$TMP/none"
unauthorized "$TMP/none"
# Every path and method is behind the password.
$TLS get "$EXPORTER_URL/" > "$TMP/index"
unauthorized "$TMP/index"
$TLS request POST "$EXPORTER_URL/metrics" > "$TMP/post"
unauthorized "$TMP/post"
$TLS --user alice:s3cret request POST "$EXPORTER_URL/metrics" > "$TMP/post"
[ "$(status "$TMP/post")" = 405 ] || { cat "$TMP/post" >&2; fail "POST with the password: not 405"; }
# Only TLS is spoken, with this certificate: plain HTTP gets no answer, and a
# client that does not trust the certificate refuses it.
port=${EXPORTER_URL##*:}
run $HTTP --user alice:s3cret get "http://127.0.0.1:$port/metrics"
[ "$status" = 1 ] || { cat "$TMP/out" >&2; fail "plain HTTP was answered"; }
run env SSL_CERT_FILE=/dev/null SSL_CERT_DIR=/nonexistent $HTTP --user alice:s3cret get "$EXPORTER_URL/metrics"
[ "$status" = 1 ] && grep -q CERTIFICATE_VERIFY_FAILED "$TMP/err" ||
  { cat "$TMP/out" "$TMP/err" >&2; fail "a client without the certificate was not refused"; }
# TLS 1.2 and 1.3 only (the client offers 1.1 alone).
python3 -W ignore::DeprecationWarning - "$port" "$W/cert.pem" << 'PY' || fail "TLS 1.1 was accepted"
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.load_verify_locations(sys.argv[2])
ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_1
try:
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20) as s:
        ctx.wrap_socket(s, server_hostname="127.0.0.1")
except (ssl.SSLError, OSError):
    sys.exit(0)
sys.exit(1)
PY
exporter_stop

# --- Users without TLS: plain HTTP with the password.
sed -n '/^basic_auth_users:/,$p' "$W/web.yml" > "$W/users.yml"
exporter_start --no-gpu --root "$R" --web-config "$W/users.yml"
case $EXPORTER_URL in http://127.0.0.1:*) ;; *) fail "not served over http: $EXPORTER_URL" ;; esac
$HTTP --user alice:s3cret get "$EXPORTER_URL/metrics" > "$TMP/ok"
[ "$(status "$TMP/ok")" = 200 ] || { cat "$TMP/ok" >&2; fail "users only: not 200"; }
$HTTP get "$EXPORTER_URL/metrics" > "$TMP/none"
unauthorized "$TMP/none"
exporter_stop

# --- TLS without users: anyone who trusts the certificate.  Relative file
# names are relative to the file's directory, not the working directory.
sed -n '1,3p' "$W/web.yml" > "$W/tls.yml"
cd /
exporter_start --no-gpu --root "$R" --web-config "$W/tls.yml"
cd - > /dev/null
$TLS get "$EXPORTER_URL/metrics" > "$TMP/ok"
[ "$(status "$TMP/ok")" = 200 ] || { cat "$TMP/ok" >&2; fail "TLS only: not 200"; }
contains "$TMP/ok" "$LINE"
exporter_stop

# --- Files it refuses: one line naming the file and the line, exit 1, and
# nothing served.
refused() {
  printf '%b' "$1" > "$W/bad.yml"
  expect 1 "$SPARKCTL" exporter --no-gpu --root "$R" --listen 127.0.0.1:0 --web-config "$W/bad.yml"
  [ "$(cat "$TMP/err")" = "sparkctl exporter: $2" ] ||
    { cat "$TMP/err" >&2; fail "wrong message, expected: sparkctl exporter: $2"; }
  [ ! -s "$TMP/out" ] || fail "output for a refused file"
}
refused 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n  client_ca_file: ca.pem\n' \
  "$W/bad.yml:4: unknown key 'client_ca_file' in tls_server_config (known: cert_file, key_file)"
refused 'tls_server_config:\n  cert_file: cert.pem\n' \
  "$W/bad.yml:1: tls_server_config needs both cert_file and key_file"
refused 'basic_auth_users:\n  alice: s3cret\n' \
  "$W/bad.yml:2: user 'alice': the password must be a bcrypt hash (\$2y\$..., e.g. from 'htpasswd -nBC 10 alice')"
refused 'basic_auth_users:\n\talice: x\n' "$W/bad.yml:2: a tab: YAML indents with spaces only"
refused 'tls_server_config:\n  cert_file: nope.pem\n  key_file: key.pem\n' \
  "cannot read cert_file $W/nope.pem: No such file or directory"
openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:prime256v1 -out "$W/other.pem" 2> /dev/null
chmod 600 "$W/other.pem"
refused 'tls_server_config:\n  cert_file: cert.pem\n  key_file: other.pem\n' \
  "cert_file $W/cert.pem with key_file $W/other.pem: The certificate and the given key do not match."
chmod 644 "$W/key.pem"
refused 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n' \
  "key_file $W/key.pem is open to other users (mode 0644): chmod o-rwx it"
chmod 600 "$W/key.pem"
expect 1 "$SPARKCTL" exporter --no-gpu --web-config "$W/none.yml"
[ "$(cat "$TMP/err")" = "sparkctl exporter: cannot read $W/none.yml: No such file or directory" ] ||
  { cat "$TMP/err" >&2; fail "wrong message for a missing file"; }
expect 2 "$SPARKCTL" exporter --once --web-config "$W/web.yml"
